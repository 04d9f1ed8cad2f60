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

Deno.test("createRealFiles(): a folder is written whole or not at all, a link is swapped in one step, and neither leaves a temporary entry", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-files-" });
  try {
    const files = createRealFiles();
    await Deno.mkdir(`${dir}/store`);
    await Deno.mkdir(`${dir}/plugins`);
    files.writeFolderAtomic(`${dir}/store/v1`, { "a.js": "1", "b.json": "{}" }, 0o644);
    files.writeFolderAtomic(`${dir}/store/v2`, { "a.js": "2", "b.json": "{}" }, 0o644);
    assert.deepEqual(files.list(`${dir}/store/v1`), ["a.js", "b.json"]);
    assert.equal(files.stat(`${dir}/store/v1/a.js`)?.mode, 0o644);
    // A folder that exists is never merged into.
    assert.throws(
      () => files.writeFolderAtomic(`${dir}/store/v1`, { "c.js": "" }, 0o644),
      (e) => isMuxError(e, "write_failed"),
    );
    assert.deepEqual(files.list(`${dir}/store`), ["v1", "v2"], "no temporary folder left");

    files.replaceLink(`${dir}/plugins/muxbridge`, `${dir}/store/v1`);
    assert.equal(files.read(`${dir}/plugins/muxbridge/a.js`), "1");
    files.replaceLink(`${dir}/plugins/muxbridge`, `${dir}/store/v2`);
    assert.equal(files.readLink(`${dir}/plugins/muxbridge`), `${dir}/store/v2`);
    assert.equal(files.read(`${dir}/plugins/muxbridge/a.js`), "2");
    assert.equal(files.realPath(`${dir}/plugins/muxbridge/a.js`), `${dir}/store/v2/a.js`);
    assert.deepEqual(files.list(`${dir}/plugins`), ["muxbridge"], "no temporary link left");
    assert.equal(files.readLink(`${dir}/store/v1`), null, "a folder is no link");

    files.removeTree(`${dir}/store/v1`);
    files.removeTree(`${dir}/store/v1`); // gone already: fine
    files.remove(`${dir}/plugins/muxbridge`); // removes the link, not its folder
    assert.deepEqual(files.list(`${dir}/store`), ["v2"]);
    assert.deepEqual(files.list(`${dir}/plugins`), []);
    assert.deepEqual(files.list(`${dir}/missing`), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
