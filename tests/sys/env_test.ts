/** `lib/sys/env.ts`: environment values through a lookup. */

import assert from "node:assert/strict";
import { envInt, envText } from "../../lib/sys/env.ts";
import { fakeEnv } from "../fakes/fake_env.ts";

Deno.test("envText() reads an empty value as unset", () => {
  const env = fakeEnv({ A: "a", B: "" });
  assert.deepEqual([envText(env, "A"), envText(env, "B"), envText(env, "C")], [
    "a",
    undefined,
    undefined,
  ]);
});

Deno.test("envInt() takes decimal digits only", () => {
  assert.deepEqual(["42", "0", "12x", "-1", "", undefined].map(envInt), [
    42,
    0,
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
});
