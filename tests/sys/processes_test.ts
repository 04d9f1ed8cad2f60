/**
 * The real process seam on Linux `/proc`: members of a process group and session, start stamps
 * that tell a process from a later one with the same pid, group signals.
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { terminateSurvivor } from "../../lib/session/close_pane.ts";
import {
  createProcesses,
  ownerAlive,
  ownerStamp,
  processEnviron,
  sameProcess,
} from "../../lib/sys/processes.ts";
import { fakeProcesses } from "../fakes/memory_store.ts";
import { requirement, requires, tool } from "../helpers/requires.ts";

const clock = createRealClock();
const LINUX = [
  requirement("Linux /proc", Deno.build.os === "linux", "these tests read /proc (Linux only)"),
  tool("setsid", "apt-get install -y util-linux"),
];

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
  ...requires("the real process seam", LINUX),
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
  ...requires("the real process seam", LINUX),
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

Deno.test("ownerAlive() is true only for the very process a stamp names: a reused pid with another start stamp is not the owner", () => {
  const processes = fakeProcesses([777]);
  processes.starts.set(777, "555");
  assert.equal(ownerAlive(processes, "777:555"), true);
  assert.equal(ownerAlive(processes, "777:554"), false, "same pid, another process");
  assert.equal(ownerAlive(processes, "778:555"), false, "no such process");
  assert.equal(ownerAlive(processes, "777:?"), true, "no stamp was known: the pid is all");
  assert.equal(ownerAlive(processes, "cli"), false);
});

Deno.test("ownerAlive() on the real process seam: this process by its stamp, not by a forged one", () => {
  const processes = createProcesses();
  const stamp = ownerStamp(processes);
  assert.equal(ownerAlive(processes, stamp), true);
  if (Deno.build.os === "linux") {
    assert.equal(ownerAlive(processes, `${processes.selfPid}:1`), false);
  }
});

Deno.test("processEnviron() reads a child's environment as it was started", async () => {
  // The environment is the one execve() got: until the child has exec'd, /proc/<pid>/environ
  // is still the forked copy of this process's. The child says when it runs, then waits for
  // its input without another exec (while one is under way the file reads empty).
  const child = new Deno.Command("sh", {
    args: ["-c", "echo ready; read -r _"],
    env: { MUXBRIDGE_ENVIRON_PROBE: "x y=z" },
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const out = child.stdout.getReader();
  try {
    const first = await out.read();
    assert.equal(new TextDecoder().decode(first.value), "ready\n");
    const env = processEnviron(child.pid);
    if (Deno.build.os === "linux") assert.equal(env?.MUXBRIDGE_ENVIRON_PROBE, "x y=z");
    else assert.equal(env, undefined);
  } finally {
    await child.stdin.close();
    await out.cancel();
    await child.status;
  }
  assert.equal(processEnviron(-1), undefined);
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

Deno.test({
  name:
    "createProcesses() counts a program whose main thread ended while another runs as alive, and terminateSurvivor() ends it",
  ...requires("a program whose main thread ended", [
    ...LINUX,
    tool("python3", "apt-get install -y python3"),
  ]),
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
