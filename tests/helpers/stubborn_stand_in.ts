/**
 * A stand-in for `opencode attach` that is hard to kill, as the real one is: the OpenCode TUI
 * ignores SIGHUP (research peers.md (b) 1), and a launcher in front of it can die of the hangup
 * while the program it started lives on. Every launch starts a child of its own that ignores
 * SIGHUP, SIGINT and SIGTERM (so do the `sleep`s it runs: ignored signals stay ignored across
 * exec), and records `<leader pid> <child pid>` once both have their traps in place.
 *
 * The session id (argv[3]) picks the leader's behaviour:
 * - contains `Wrap`: the leader dies of SIGHUP (a wrapper); only its child survives the pane;
 * - contains `Exit`: the leader runs no child and exits by itself once `<dir>/exit.<id>` exists;
 * - otherwise the leader ignores SIGHUP, SIGINT and SIGTERM as well.
 *
 * @module
 */

import { readdirSync, readFileSync, readlinkSync } from "node:fs";

/**
 * Writes the stubborn stand-in into `dir` (a directory unique to the test: its path marks
 * every process the stand-in starts).
 *
 * @param dir The directory (also where launches are recorded).
 * @returns The program path.
 */
export async function writeStubbornStandIn(dir: string): Promise<string> {
  const path = `${dir}/opencode-stubborn`;
  await Deno.writeTextFile(
    path,
    `#!/bin/sh
dir='${dir}'
sid="$4"
case "$sid" in
*Exit*)
  trap '' INT
  printf '%s - %s\\n' "$$" "$sid" > "$dir/pids.$$.tmp" && mv "$dir/pids.$$.tmp" "$dir/pids.$$"
  while [ ! -e "$dir/exit.$sid" ]; do sleep 0.05; done
  exit 0 ;;
*Wrap*) trap '' INT ;;
*) trap '' HUP INT TERM ;;
esac
sh -c 'trap "" HUP INT TERM; : > "$1/ready.$$"; while :; do sleep 1; done' stubborn-child "$dir" &
child=$!
while [ ! -e "$dir/ready.$child" ]; do sleep 0.02; done
printf '%s %s %s\\n' "$$" "$child" "$sid" > "$dir/pids.$$.tmp" && mv "$dir/pids.$$.tmp" "$dir/pids.$$"
while :; do sleep 1; done
`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

/** One launch of the stubborn stand-in. */
export interface StubbornLaunch {
  /** The leader (the pane's program). */
  pid: number;
  /** The child it started (none for `Exit` launches). */
  child?: number;
  /** The session id it attached to. */
  sessionId: string;
}

/** Every launch recorded in `dir`. */
export function stubbornLaunches(dir: string): StubbornLaunch[] {
  const out: StubbornLaunch[] = [];
  for (const name of readdirSync(dir)) {
    if (!/^pids\.\d+$/.test(name)) continue;
    const [pid, child, sessionId] = readFileSync(`${dir}/${name}`, "utf8").trim().split(" ");
    out.push({
      pid: Number(pid),
      ...(child !== "-" ? { child: Number(child) } : {}),
      sessionId,
    });
  }
  return out;
}

/** `/proc/<pid>/stat` fields after the name, or undefined when the process is gone. */
function stat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return text.slice(text.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined;
  }
}

/**
 * Live processes (zombies aside) of the stand-in, read from `/proc`: those whose process group
 * or session is a recorded leader's, the recorded leaders and children themselves, and, when no
 * session is named, any process whose command line names `dir`.
 *
 * @param dir The stand-in's directory.
 * @param sessionIds Only the launches for these sessions (default: everything of the stand-in).
 * @returns Descriptions such as `1234 (S) sh -c … stubborn-child /tmp/…`.
 */
export function survivors(dir: string, sessionIds?: readonly string[]): string[] {
  const launches = stubbornLaunches(dir).filter((l) =>
    sessionIds === undefined || sessionIds.includes(l.sessionId)
  );
  const groups = new Set(launches.map((l) => l.pid));
  const pids = new Set(launches.flatMap((l) => (l.child ? [l.pid, l.child] : [l.pid])));
  const out: string[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    if (pid === Deno.pid) continue;
    const fields = stat(pid);
    if (!fields || fields[0] === "Z" || fields[0] === "X") continue;
    let cmdline = "";
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    } catch {
      continue;
    }
    const related = pids.has(pid) || groups.has(Number(fields[2])) ||
      groups.has(Number(fields[3]));
    // Only the stand-in's own processes name the directory (tmux and the bridge do not).
    const named = sessionIds === undefined && cmdline.includes(dir) &&
      !/\btmux\b/.test(exe(pid));
    if (related || named) out.push(`${pid} (${fields[0]}) ${cmdline}`);
  }
  return out;
}

function exe(pid: number): string {
  try {
    return readlinkSync(`/proc/${pid}/exe`);
  } catch {
    return "";
  }
}

/**
 * Kills every recorded launch's process group (and child) outright: the test's own safety net,
 * run before the directory is removed, so a failed assertion never leaves a stand-in behind.
 *
 * @param dir The stand-in's directory.
 */
export function killStandIns(dir: string): void {
  let launches: StubbornLaunch[];
  try {
    launches = stubbornLaunches(dir);
  } catch {
    return;
  }
  for (const l of launches) {
    for (const pid of [l.pid, l.child]) {
      if (!pid) continue;
      for (const target of [-pid, pid]) {
        try {
          Deno.kill(target, "SIGKILL");
        } catch { /* already gone */ }
      }
    }
  }
}
