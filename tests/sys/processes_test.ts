/**
 * The real process seam on Linux `/proc`: members of a process group and session, start stamps
 * that tell a process from a later one with the same pid, group signals.
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { terminateSurvivor } from "../../lib/session/close_pane.ts";
import { createProcesses, sameProcess } from "../../lib/sys/processes.ts";

const clock = createRealClock();
const onLinux = Deno.build.os === "linux";

/** Starts `sh` as a session and group leader (as a terminal starts a pane's program). */
function leader(script: string): Deno.ChildProcess {
  // setsid runs the program in the same pid when the caller is not a group leader.
  return new Deno.Command("setsid", {
    args: ["sh", "-c", script],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

Deno.test({
  name: "createProcesses() members() lists a leader's group and session, children included",
  ignore: !onLinux,
  async fn() {
    const p = createProcesses();
    const child = leader("trap '' HUP INT TERM; sleep 30 & sleep 30 & wait");
    try {
      const ok = await waitFor(clock, () => p.members(child.pid).length >= 3, {
        deadline: clock.now() + 3000,
      });
      assert.ok(ok, `members: ${p.members(child.pid)}`);
      assert.ok(p.members(child.pid).includes(child.pid));
      assert.deepEqual(p.members(Deno.pid).filter((m) => m === child.pid), []);
      const start = p.startTime(child.pid);
      assert.ok(start !== undefined && /^\d+$/.test(start));
      assert.equal(sameProcess(p, child.pid, start), true);
      assert.equal(sameProcess(p, child.pid, `${start}0`), false, "another start: another process");
      assert.deepEqual(p.members(1).length, 0, "never pid 1's group");
    } finally {
      try {
        Deno.kill(-child.pid, "SIGKILL");
      } catch { /* gone */ }
      await child.status;
    }
  },
});

Deno.test({
  name:
    "terminateSurvivor() ends a real group that ignores SIGHUP, SIGINT and SIGTERM, and the child its dead leader left",
  ignore: !onLinux,
  async fn() {
    const p = createProcesses();
    const stubborn = leader("trap '' HUP INT TERM; sleep 30 & sleep 30 & wait");
    // A wrapper that is gone, leaving an ignoring child in its group.
    const wrapper = leader("(trap '' HUP INT TERM; exec sleep 30) & exit 0");
    try {
      await wrapper.status;
      const start = p.startTime(stubborn.pid);
      await waitFor(clock, () => p.members(stubborn.pid).length >= 3, {
        deadline: clock.now() + 3000,
      });
      await waitFor(clock, () => p.members(wrapper.pid).length >= 1, {
        deadline: clock.now() + 3000,
      });
      assert.equal(p.alive(wrapper.pid), false, "the wrapper is gone");
      assert.equal(p.members(wrapper.pid).length, 1, "its child is not");

      assert.equal(await terminateSurvivor(p, stubborn.pid, clock, 100, start), true);
      assert.deepEqual(p.members(stubborn.pid), []);
      assert.equal(await terminateSurvivor(p, wrapper.pid, clock, 100, "0"), true);
      assert.deepEqual(p.members(wrapper.pid), []);
    } finally {
      for (const c of [stubborn, wrapper]) {
        try {
          Deno.kill(-c.pid, "SIGKILL");
        } catch { /* gone */ }
      }
      await stubborn.status;
    }
  },
});

/** A program whose main thread ends while another thread runs on, blocking SIGTERM: the state a
 * Bun program (the OpenCode TUI) passes through on its way out, held here for as long as the
 * test needs. */
function mainThreadGone(): Deno.ChildProcess {
  const script = [
    "import ctypes, signal, threading, time",
    "signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGTERM, signal.SIGHUP, signal.SIGINT])",
    "threading.Thread(target=lambda: time.sleep(30)).start()",
    "ctypes.CDLL(None).pthread_exit(None)",
  ].join("\n");
  return new Deno.Command("setsid", {
    args: ["python3", "-c", script],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

const hasPython = (() => {
  try {
    return new Deno.Command("python3", { args: ["-c", ""] }).outputSync().success;
  } catch {
    return false;
  }
})();
if (onLinux && !hasPython) console.error("processes_test: a case is skipped, python3 is missing");

Deno.test({
  name:
    "createProcesses() counts a program whose main thread ended while another runs as alive, and terminateSurvivor() ends it",
  ignore: !onLinux || !hasPython,
  async fn() {
    const p = createProcesses();
    const child = mainThreadGone();
    try {
      const state = () => Deno.readTextFileSync(`/proc/${child.pid}/stat`).split(") ")[1][0];
      assert.ok(
        await waitFor(clock, () => state() === "Z", { deadline: clock.now() + 10_000 }),
        "the main thread ended (the kernel shows the leader as a zombie)",
      );
      assert.equal(p.alive(child.pid), true, "a thread still runs");
      assert.deepEqual(p.members(child.pid), [child.pid]);
      // SIGTERM is blocked by every thread: only SIGKILL ends it.
      assert.equal(await terminateSurvivor(p, child.pid, clock, 100, p.startTime(child.pid)), true);
      assert.equal(p.alive(child.pid), false);
      assert.deepEqual(p.members(child.pid), []);
      assert.equal((await child.status).signal, "SIGKILL");
    } finally {
      try {
        Deno.kill(-child.pid, "SIGKILL");
      } catch { /* gone */ }
      await child.status;
    }
  },
});
