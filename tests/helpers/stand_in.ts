/**
 * A stand-in for `opencode attach`: a small sh script that records the arguments it receives
 * (NUL-separated, one file per process), its pid, working directory and the credentials in its
 * environment, then waits; it exits on Ctrl+C unless told
 * to ignore signals (as the real OpenCode TUI ignores SIGHUP).
 *
 * @module
 */

/**
 * Writes the stand-in `opencode`: it records its arguments (NUL-separated, without `$0`) and
 * exits on Ctrl+C.
 */
export async function writeStandIn(
  dir: string,
  opts: { ignoreSignals?: boolean } = {},
): Promise<string> {
  const path = `${dir}/opencode-stand-in`;
  const trap = opts.ignoreSignals ? "trap '' INT TERM HUP" : "trap 'exit 0' INT TERM";
  await Deno.writeTextFile(
    path,
    `#!/bin/sh
${trap}
pwd > "${dir}/cwd.$$"
printf '%s' "\${OPENCODE_SERVER_PASSWORD-}" > "${dir}/password.$$"
printf '%s' "\${OPENCODE_SERVER_USERNAME-}" > "${dir}/username.$$"
# The argv file is written last and renamed into place: its presence means the launch is complete.
out="${dir}/argv.$$"
for a in "$@"; do printf '%s\\0' "$a"; done > "$out.tmp" && mv "$out.tmp" "$out"
while :; do sleep 1; done
`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

/** One start of the stand-in. */
export interface Launch {
  /** Its pid. */
  pid: number;
  /** Its arguments. */
  argv: string[];
  /** Its working directory. */
  cwd: string;
  /** The OPENCODE_SERVER_PASSWORD it saw ("" when unset). */
  password: string;
  /** The OPENCODE_SERVER_USERNAME it saw ("" when unset). */
  username: string;
}

/** Reads every start of the stand-in recorded in `dir`. */
export async function recordedLaunches(dir: string): Promise<Launch[]> {
  const out: Launch[] = [];
  for await (const e of Deno.readDir(dir)) {
    const m = /^argv\.(\d+)$/.exec(e.name);
    if (!m) continue;
    const read = (name: string) => Deno.readTextFile(`${dir}/${name}.${m[1]}`).catch(() => "");
    out.push({
      pid: Number(m[1]),
      argv: (await read("argv")).split("\0").slice(0, -1),
      // Only pwd's newline goes: a directory name may end in spaces.
      cwd: (await read("cwd")).replace(/\n$/, ""),
      password: await read("password"),
      username: await read("username"),
    });
  }
  return out;
}

/** Reads every argv the stand-in recorded. */
export async function recordedArgv(dir: string): Promise<string[][]> {
  return (await recordedLaunches(dir)).map((l) => l.argv);
}
