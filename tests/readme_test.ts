import assert from "node:assert/strict";
import { regenerate } from "../scripts/gen_readme.ts";

Deno.test("README.md's generated config reference and command list are up to date", async () => {
  const text = await Deno.readTextFile(new URL("../README.md", import.meta.url));
  assert.equal(regenerate(text), text, "run `deno run -A scripts/gen_readme.ts`");
});
