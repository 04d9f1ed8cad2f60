/**
 * The leak check of `scripts/run_tests.ts`: finding the processes that carry a run's tag (a
 * fake `/proc` tree, then real children), stopping them, and the whole runner failing a run
 * whose test leaves a process behind.
 *
 * @module
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  describeTagged,
  RUN_TAG_VAR,
  stopTagged,
  taggedProcesses,
} from "../scripts/_tagged_processes.ts";
import { runTag } from "./helpers/run_tag.ts";
import { setEnv } from "./helpers/env_scope.ts";
import { requires, tool } from "./helpers/requires.ts";
import { startTmuxServer, type TmuxServer } from "./helpers/tmux_server.ts";
import { until } from "./helpers/until.ts";

const REPO = new URL("..", import.meta.url).pathname;

/** Whether `pid` is (still) the fixture's `sleep 600`, not a process that reused its pid. */
function runsSleep(pid: number): boolean {
  try {
    return Deno.readTextFileSync(`/proc/${pid}/cmdline`) === "sleep\x00600\x00";
  } catch {
    return false;
  }
}

/** A fake `/proc/<pid>` with the given environment, argv and cwd. */
function fakeProcess(proc: string, pid: string, env: string[] | null, argv: string[]): void {
  Deno.mkdirSync(join(proc, pid));
  if (env !== null) Deno.writeTextFileSync(join(proc, pid, "environ"), env.join("\0") + "\0");
  Deno.writeTextFileSync(join(proc, pid, "cmdline"), argv.join("\0") + "\0");
  Deno.symlinkSync(`/work-of-${pid}`, join(proc, pid, "cwd"));
}

Deno.test("taggedProcesses() finds exactly the processes whose environment holds the run's tag", () => {
  const proc = Deno.makeTempDirSync({ prefix: "muxbridge-fake-proc-" });
  try {
    const tag = "run-1";
    fakeProcess(proc, "300", ["A=1", `${RUN_TAG_VAR}=${tag}`, "B=2"], ["sleep", "600"]);
    fakeProcess(proc, "20", [`${RUN_TAG_VAR}=${tag}`], ["tmux", "-L", "muxbridge-test-ab12", "x"]);
    fakeProcess(proc, "21", [`${RUN_TAG_VAR}=run-2`], ["another", "run"]);
    fakeProcess(proc, "22", [`${RUN_TAG_VAR}=${tag}x`, `X${RUN_TAG_VAR}=${tag}`], ["near", "miss"]);
    fakeProcess(proc, "23", null, ["zombie"]); // no readable environment
    fakeProcess(proc, "24", [`${RUN_TAG_VAR}=${tag}`], ["the", "runner"]);
    Deno.mkdirSync(join(proc, "self"));
    Deno.writeTextFileSync(join(proc, "uptime"), "1 1\n");

    const found = taggedProcesses(tag, { proc, exclude: [24] });
    assert.deepEqual(found, [
      { pid: 20, argv: ["tmux", "-L", "muxbridge-test-ab12", "x"], cwd: "/work-of-20" },
      { pid: 300, argv: ["sleep", "600"], cwd: "/work-of-300" },
    ]);
    assert.equal(
      describeTagged(found[0]),
      'pid 20 (tmux server muxbridge-test-ab12): ["tmux","-L","muxbridge-test-ab12","x"] ' +
        "in /work-of-20",
    );
    assert.equal(describeTagged(found[1]), 'pid 300: ["sleep","600"] in /work-of-300');
    // Another user's processes are never reported (nor signalled).
    assert.deepEqual(taggedProcesses(tag, { proc, uid: (Deno.uid() ?? 0) + 1 }), []);
    assert.deepEqual(taggedProcesses(tag, { proc: join(proc, "missing") }), []);
  } finally {
    Deno.removeSync(proc, { recursive: true });
  }
});

Deno.test("stopTagged() ends tagged children by pid: SIGTERM, then SIGKILL for one that ignores it", async () => {
  const tag = crypto.randomUUID();
  const cwd = Deno.makeTempDirSync({ prefix: "muxbridge-tagged-" });
  const start = (script: string) =>
    new Deno.Command("sh", {
      args: ["-c", script],
      cwd,
      env: { [RUN_TAG_VAR]: tag },
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).spawn();
  const polite = start("exec sleep 600");
  const stubborn = start("trap '' TERM; exec sleep 600");
  try {
    await until("both children run sleep", () =>
      taggedProcesses(tag).length === 2 &&
      taggedProcesses(tag).every((p) => p.argv[0] === "sleep"));
    const found = taggedProcesses(tag);
    assert.deepEqual(found.map((p) => p.pid), [polite.pid, stubborn.pid].sort((a, b) => a - b));
    for (const p of found) {
      assert.deepEqual(p.argv, ["sleep", "600"]);
      assert.equal(p.cwd, Deno.realPathSync(cwd));
    }
    const signals: string[] = [];
    const kill = (pid: number, sig: "SIGTERM" | "SIGKILL") => {
      signals.push(`${pid === polite.pid ? "polite" : "stubborn"} ${sig}`);
      Deno.kill(pid, sig);
    };
    // A generous grace for the one that ends on SIGTERM (the wait ends when it is gone); a
    // short one for the one that never does (its wait always runs out, loaded machine or not).
    assert.deepEqual(await stopTagged(tag, [polite.pid], { graceMs: 60_000, kill }), []);
    assert.deepEqual(await stopTagged(tag, [stubborn.pid], { graceMs: 100, kill }), []);
    assert.equal((await polite.status).signal, "SIGTERM");
    assert.equal((await stubborn.status).signal, "SIGKILL");
    assert.deepEqual(signals, ["polite SIGTERM", "stubborn SIGTERM", "stubborn SIGKILL"]);
    assert.deepEqual(taggedProcesses(tag), []);
  } finally {
    for (const c of [polite, stubborn]) {
      try {
        c.kill("SIGKILL");
      } catch { /* already ended */ }
      await c.status;
    }
    Deno.removeSync(cwd, { recursive: true });
  }
});

Deno.test("scripts/run_tests.ts fails a run whose test leaves a process running, names it and stops it", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "muxbridge-leaky-run-" });
  const pidFile = join(dir, "pid");
  let leaked = 0;
  try {
    // A run of its own: not inside this one (no MUXBRIDGE_SKIP_LOG), with its own tag.
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", "scripts/run_tests.ts", "tests/testdata/run_tests/leaky.ts"],
      cwd: REPO,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: Deno.env.get("HOME") ?? dir,
        ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
        NO_COLOR: "1",
        LEAKY_PID_FILE: pidFile,
        ...runTag(),
      },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    leaked = Number(Deno.readTextFileSync(pidFile).trim());
    assert.ok(leaked > 0, `the fixture's pid file: ${stdout}`);
    assert.equal(out.code, 1, stdout);
    assert.match(stdout, /1 passed/);
    assert.match(stdout, /FAILED: 1 process\(es\) the tests started were still running/);
    assert.match(stdout, new RegExp(`pid ${leaked}: \\["sleep","600"\\] in /`));
    assert.match(stdout, /all of them are stopped now/);
    assert.ok(!runsSleep(leaked), "the runner stopped the leaked sleep");
  } finally {
    if (leaked > 0 && runsSleep(leaked)) Deno.kill(leaked, "SIGKILL");
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test({
  name: "a tmux server a test starts, and its panes, carry the run's tag until closed",
  ...requires("the tmux server's tag", [tool("tmux")]),
  async fn() {
    // Inside a run the run's own tag; under a bare `deno test` one for this test.
    const tag = Deno.env.get(RUN_TAG_VAR) ?? crypto.randomUUID();
    const restore = setEnv({ [RUN_TAG_VAR]: tag });
    let server: TmuxServer | undefined;
    try {
      server = await startTmuxServer();
      const s = server;
      const anchorPid = Number((await s.tmux(["display-message", "-p", "#{pane_pid}"])).trim());
      const ours = () => taggedProcesses(tag).filter((p) => p.argv.includes(s.socketName));
      const seen = taggedProcesses(tag).filter((p) => [s.serverPid, anchorPid].includes(p.pid));
      assert.deepEqual(seen.map((p) => p.pid).sort(), [s.serverPid, anchorPid].sort());
      assert.match(describeTagged(ours()[0]), /^pid \d+ \(tmux server muxbridge-test-/);
      await s.close();
      server = undefined;
      await until(
        "the server and its pane to be gone",
        () => ours().length === 0 && taggedProcesses(tag).every((p) => p.pid !== anchorPid),
      );
    } finally {
      await server?.close();
      restore();
    }
  },
});
