/**
 * The credentials file every backend without a private per-pane environment uses: written 0600
 * in a private directory, read and removed by the pane's `/bin/sh` before the program starts,
 * leftovers of crashed runs swept, the state directory checked before anything is written.
 */

import assert from "node:assert/strict";
import { utimesSync } from "node:fs";
import {
  credentialsArgv,
  removeCredentialsFile,
  sourceAndExec,
  STALE_MS,
  writeCredentialsFile,
} from "../../lib/sys/credentials_file.ts";
import { writePaneCredentials } from "../../lib/backend/_pane_credentials.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { resolveConfig } from "../helpers/config.ts";
import { runTag } from "../helpers/run_tag.ts";

const SECRET = "p@ss 'x' $(touch pwned) `id` \\ \n--help";

async function sh(args: string[], cwd: string): Promise<string> {
  const out = await new Deno.Command("/bin/sh", { args, cwd, env: runTag(), clearEnv: true })
    .output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

Deno.test("credentialsArgv() gives the program the variables through /bin/sh, which removes the file first; nothing is parsed", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const credentials = writeCredentialsFile(dir, {
      OPENCODE_SERVER_PASSWORD: SECRET,
      OPENCODE_SERVER_USERNAME: "u",
    });
    assert.equal((await Deno.lstat(credentials.file)).mode! & 0o777, 0o600);
    const argv = credentialsArgv(
      [
        "/bin/sh",
        "-c",
        'test ! -e "$0" && printf "%s|%s" "$OPENCODE_SERVER_PASSWORD" "$1"',
        credentials.file,
        "$(x) 'a'",
      ],
      credentials,
    );
    assert.deepEqual(argv.slice(0, 4), [
      "/bin/sh",
      "-c",
      '. "$0"; rm -f -- "$0"; exec "$@"',
      credentials.file,
    ]);
    assert.ok(!argv.some((a) => a.includes("p@ss")), "the secret is on no argv");
    const [cmd, ...args] = argv;
    assert.equal(cmd, "/bin/sh");
    assert.equal(await sh(args, dir), `${SECRET}|$(x) 'a'`);
    await assert.rejects(() => Deno.lstat(credentials.file), Deno.errors.NotFound);
    assert.ok(!(await Deno.lstat(`${dir}/pwned`).catch(() => null)), "no value was run");
    assert.deepEqual(credentialsArgv(["x"], undefined), ["x"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sourceAndExec() loads and removes the file, then execs; a missing file starts nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const credentials = writeCredentialsFile(dir, { OPENCODE_SERVER_PASSWORD: SECRET });
    const script = sourceAndExec(
      ["/bin/sh", "-c", 'printf %s "$OPENCODE_SERVER_PASSWORD"'],
      credentials,
    );
    assert.equal(await sh(["-c", script], dir), SECRET);
    await assert.rejects(() => Deno.lstat(credentials.file), Deno.errors.NotFound);
    const again = await new Deno.Command("/bin/sh", {
      args: ["-c", `${script}; echo ran`],
      env: runTag(),
      clearEnv: true,
    }).output();
    assert.notEqual(again.code, 0);
    assert.equal(new TextDecoder().decode(again.stdout), "", "nothing ran without the file");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeCredentialsFile() sweeps leftovers older than STALE_MS and nothing else", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const now = Date.now();
    const old = writeCredentialsFile(dir, { A: "1" }, now);
    const fresh = writeCredentialsFile(dir, { A: "2" }, now);
    const stranger = `${dir}/notes.txt`;
    await Deno.writeTextFile(stranger, "kept");
    const past = new Date(now - STALE_MS - 60_000);
    utimesSync(old.file, past, past);
    utimesSync(stranger, past, past);
    const next = writeCredentialsFile(dir, { A: "3" }, now);
    await assert.rejects(() => Deno.lstat(old.file), Deno.errors.NotFound);
    for (const kept of [fresh.file, next.file, stranger]) assert.ok(await Deno.lstat(kept));
    removeCredentialsFile(fresh);
    removeCredentialsFile(fresh); // twice: never throws
    await assert.rejects(() => Deno.lstat(fresh.file), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writeCredentialsFile() refuses a variable no environment can carry, writing nothing", async () => {
  const dir = await Deno.makeTempDir();
  try {
    for (const env of [{ "A=B": "x" }, { A: "x\0y" }] as Record<string, string>[]) {
      assert.throws(() => writeCredentialsFile(dir, env), (e) => isMuxError(e, "invalid_argument"));
    }
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("writePaneCredentials() writes into the state directory's private credentials folder, and refuses a state directory others can write", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const deps = (state: string) => ({
      config: resolveConfig({ env: () => undefined, flags: { state_dir: state } }),
      env: () => undefined,
    });
    assert.equal(writePaneCredentials(deps(`${dir}/state`), {}), undefined, "nothing to write");
    const written = writePaneCredentials(deps(`${dir}/state`), { A: "1" })!;
    const folder = `${await Deno.realPath(dir)}/state/credentials`;
    assert.equal(written.file.slice(0, written.file.lastIndexOf("/")), folder);
    assert.equal((await Deno.stat(folder)).mode! & 0o777, 0o700);
    await Deno.mkdir(`${dir}/open`);
    await Deno.chmod(`${dir}/open`, 0o777);
    assert.throws(
      () => writePaneCredentials(deps(`${dir}/open`), { A: "1" }),
      (e) => isMuxError(e, "invalid_config") && /other users can write to it/.test(e.message),
    );
    assert.ok(!(await Deno.lstat(`${dir}/open/credentials`).catch(() => null)));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
