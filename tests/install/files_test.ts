/**
 * The real file seam: atomic writes leave either the old file or the new one, never a
 * temporary file (OpenCode loads every .ts/.js in its plugin folder), and failures are
 * `write_failed` with a hint.
 */

import assert from "node:assert/strict";
import { createRealFiles } from "../../lib/install/files.ts";
import { isMuxError } from "../../lib/sys/errors.ts";

Deno.test("createRealFiles().writeAtomic() replaces a file, keeps the mode it is given, leaves no temporary file", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-files-" });
  try {
    const files = createRealFiles();
    files.writeAtomic(`${dir}/a.ts`, "one\n", 0o644);
    files.writeAtomic(`${dir}/a.ts`, "two\n", 0o600);
    assert.equal(files.read(`${dir}/a.ts`), "two\n");
    assert.equal(files.stat(`${dir}/a.ts`)?.mode, 0o600);
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["a.ts"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("createRealFiles() fails with write_failed (and cleans up) when the target cannot be replaced or the folder is not one", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-files-" });
  try {
    const files = createRealFiles();
    await Deno.mkdir(`${dir}/taken.ts`); // a folder where the file should go: rename fails
    assert.throws(
      () => files.writeAtomic(`${dir}/taken.ts`, "x", 0o644),
      (e) => isMuxError(e, "write_failed"),
    );
    assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), ["taken.ts"]);
    await Deno.writeTextFile(`${dir}/file`, "");
    assert.throws(() => files.mkdirp(`${dir}/file/plugin`), (e) => isMuxError(e, "write_failed"));
    assert.equal(files.read(`${dir}/file/plugin/x`), null);
    assert.equal(files.removeEmptyDir(`${dir}`), false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
