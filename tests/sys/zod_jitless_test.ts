/**
 * lib/sys/zod_jitless.ts: it is main.ts's first import (zod decides per object schema, when the
 * schema is built, whether to generate a parser), and a schema built after it accepts, fills in
 * and refuses exactly what one built before it does.
 */

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { z } from "zod";

Deno.test("main.ts imports lib/sys/zod_jitless.ts before anything else", () => {
  const main = readFileSync(new URL("../../main.ts", import.meta.url), "utf8");
  const first = /^import\s[^;]*;/m.exec(main)?.[0];
  assert.equal(first, 'import "./lib/sys/zod_jitless.ts";');
});

Deno.test("zod_jitless: schemas built after it parse as those built before it", async () => {
  const shape = () =>
    z.strictObject({
      name: z.string().min(1),
      size: z.number().int().min(0).default(3),
      section: z.strictObject({ bin: z.string().default("tmux") }).prefault({}),
    });
  const before = shape();
  await import("../../lib/sys/zod_jitless.ts");
  assert.equal(z.config().jitless, true);
  const after = shape();
  const inputs: unknown[] = [
    { name: "a" },
    { name: "a", size: 7, section: { bin: "x" } },
    { name: "", size: -1 },
    { name: "a", extra: 1 },
    { name: "a", section: { nope: true } },
    "not an object",
  ];
  for (const input of inputs) {
    const a = before.safeParse(input);
    const b = after.safeParse(input);
    assert.equal(b.success, a.success, JSON.stringify(input));
    assert.deepEqual(b.success ? b.data : b.error.issues, a.success ? a.data : a.error.issues);
  }
});
