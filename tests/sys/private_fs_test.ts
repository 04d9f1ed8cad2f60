/**
 * The state directory's safety rule (`lib/sys/private_fs.ts`): a directory muxbridge keeps its
 * records in must be this user's and writable by nobody else: not by the group either (0770,
 * 0775, 0720), not only by the world (0777, 0702). Readable by others is fine.
 */

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateDir, ensurePrivateSubdir } from "../../lib/sys/private_fs.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { requirement, requires } from "../helpers/requires.ts";

const UNIX = [
  requirement("POSIX modes", Deno.build.os !== "windows", "modes are POSIX (Linux, macOS)"),
];

/** A directory under a fresh private scratch directory, made with `mode`. */
function dirWith(scratch: string, name: string, mode: number): string {
  const dir = join(scratch, name);
  mkdirSync(dir, { mode: 0o700 });
  chmodSync(dir, mode); // the umask does not apply to chmod
  return dir;
}

Deno.test({
  name:
    "ensurePrivateDir() and ensurePrivateSubdir() refuse a directory the group or others can write to, and take one they can only read",
  ...requires("the state directory's mode checks", UNIX),
  fn() {
    const scratch = Deno.makeTempDirSync({ prefix: "muxbridge-private-" });
    try {
      for (const mode of [0o770, 0o775, 0o720, 0o777, 0o702]) {
        const octal = `0${mode.toString(8)}`;
        const dir = dirWith(scratch, `state-${octal}`, mode);
        assert.throws(
          () => ensurePrivateDir(dir),
          (e) =>
            isMuxError(e, "invalid_config") &&
            e.message.includes(`other users can write to it (mode ${octal})`) &&
            /chmod 700/.test(e.hint ?? ""),
          octal,
        );
        const parent = dirWith(scratch, `parent-${octal}`, 0o700);
        dirWith(parent, "panes", mode);
        assert.throws(
          () => ensurePrivateSubdir(parent, "panes"),
          (e) => isMuxError(e, "invalid_config") && e.message.includes(`(mode ${octal})`),
          `subdirectory ${octal}`,
        );
      }
      for (const mode of [0o700, 0o750, 0o755]) {
        const dir = dirWith(scratch, `ok-${mode.toString(8)}`, mode);
        assert.equal(ensurePrivateDir(dir), Deno.realPathSync(dir), mode.toString(8));
        assert.equal(ensurePrivateSubdir(dir, "panes"), join(dir, "panes"));
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  },
});
