/**
 * End to end with the REAL OpenCode server (npm `opencode-ai`, pinned): OpenCode loads the
 * bundled 1.x plugin `muxbridge install` writes (`muxbridge.js`, from `plugin/`) through
 * `OPENCODE_CONFIG_CONTENT` (`file://`), the plugin runs the real
 * muxbridge entry point in bridge mode, and muxbridge opens real `opencode attach` panes in a
 * private tmux server that OpenCode itself runs in.
 *
 * One real-server run covers the whole pane lifecycle (the server takes seconds to start and
 * its first prompt costs more; CI has two cores); a second run loads the plugin with a bridge
 * that stalls, one that crashes and a missing one at once.
 *
 * Everything is loopback: the model is a mock on 127.0.0.1, npm is forced offline.
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { createProcesses } from "../lib/sys/processes.ts";
import { muxbridgeArgv } from "./helpers/bridge_process.ts";
import {
  attachUnder,
  cmdline,
  opencodeBin,
  type OpencodeServer,
  ROOT,
  startOpencodeServer,
} from "./helpers/opencode_server.ts";
import { startTmuxServer } from "./helpers/tmux_server.ts";
import { until as waitUntil } from "./helpers/until.ts";
import { requirement, requires } from "./helpers/requires.ts";
import { PLUGIN_V1 } from "../lib/install/plugin_source.ts";

const clock = createRealClock();
const processes = createProcesses();

/**
 * Writes the 1.x plugin `muxbridge install` writes into `dir`, with a package.json of its own
 * (OpenCode resolves a `file://` plugin through the nearest one), and returns its URL.
 */
async function writePlugin(dir: string): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(`${dir}/muxbridge.js`, PLUGIN_V1);
  await Deno.writeTextFile(
    `${dir}/package.json`,
    JSON.stringify({
      name: "muxbridge-test-plugin",
      private: true,
      type: "module",
      main: "muxbridge.js",
    }),
  );
  return `file://${dir}/muxbridge.js`;
}
const OPENCODE = [
  requirement(
    "the opencode binary",
    opencodeBin() !== null,
    "npm install (opencode-ai), or set OPENCODE_TEST_BIN",
  ),
];

/** The shared bounded wait ({@linkcode waitUntil}) at this test's pace: a minute by default. */
const until = (
  what: string,
  cond: () => boolean | Promise<boolean>,
  context?: () => string,
  ms = 60_000,
) => waitUntil(what, cond, { ms, maxIntervalMs: 100, context });

function readText(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}

/** The protocol lines the plugin logged from its bridge's stdout, in order. */
function bridgeSaid(log: string): Array<Record<string, unknown>> {
  return log.split("\n").flatMap((l) => {
    const i = l.indexOf("] bridge: {");
    return i < 0 ? [] : [JSON.parse(l.slice(i + "] bridge: ".length))];
  });
}

/**
 * The muxbridge command: `MUXBRIDGE_TEST_BIN`, else `deno run … main.ts` with the repository's
 * deno.json named (Deno finds it from the working directory, which here is OpenCode's project).
 */
function muxbridgeCommand(): string[] {
  const argv = muxbridgeArgv();
  if (argv.length === 1) return argv;
  return [...argv.slice(0, -1), "--config", `${ROOT}deno.json`, argv.at(-1)!];
}

/** The wrapper OpenCode's plugin runs as MUXBRIDGE_BIN. */
async function writeWrapper(dir: string): Promise<string> {
  const argv = muxbridgeCommand();
  if (argv.length === 1) return argv[0];
  // OpenCode's HOME is a temporary one: keep Deno's own module cache.
  const denoDir = Deno.env.get("DENO_DIR") ??
    `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`;
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const path = `${dir}/muxbridge`;
  await Deno.writeTextFile(
    path,
    `#!/bin/sh\nDENO_DIR=${q(denoDir)} exec ${argv.map(q).join(" ")} "$@"\n`,
  );
  await Deno.chmod(path, 0o755);
  return path;
}

async function runCli(args: string[], env: Record<string, string>) {
  const [cmd, ...pre] = muxbridgeCommand();
  const out = await new Deno.Command(cmd, {
    args: [...pre, ...args],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

Deno.test({
  name:
    "real OpenCode + plugin + tmux: a child's pane runs `opencode attach`, closes on idle, reopens, closes on delete; after a SIGKILL the restarted bridge adopts the busy child's pane and closes it on idle",
  ...requires("the plugin end-to-end tests", OPENCODE),
  async fn() {
    const t0 = performance.now();
    const ms = () => Math.round(performance.now() - t0);
    const timings: Record<string, number> = {};
    const tmux = await startTmuxServer({ width: 220, height: 60 });
    const work = await Deno.makeTempDir({ prefix: "muxbridge-e2e-plugin-" });
    let server: OpencodeServer | undefined;
    const bridgePids = new Set<number>();
    try {
      const wrapper = await writeWrapper(work);
      const state = `${work}/state`;
      const configPath = `${work}/config.json`;
      const log = `${state}/bridge.log`; // the plugin's default: $MUXBRIDGE_STATE_DIR/bridge.log
      const plugin = await writePlugin(`${work}/plugin`);
      server = await startOpencodeServer({
        tmux,
        plugins: [[plugin, { backoffMs: 200, maxRestarts: 3 }]],
        env: {
          MUXBRIDGE_BIN: wrapper,
          MUXBRIDGE_CONFIG: configPath,
          MUXBRIDGE_STATE_DIR: state,
        },
        chunkDelayMs: 100,
      });
      timings.serverStart = server.startMs;
      const s = server;
      const context = () =>
        `plugin log:\n${readText(log)}\nserver stderr:\n${s.stderr().slice(-3000)}`;
      // Written before the first instance request: that request boots the plugin and bridge.
      await Deno.writeTextFile(
        configPath,
        JSON.stringify({
          backend: "tmux",
          tmux: { socket_name: tmux.socketName, target: s.paneId },
          opencode_bin: s.bin,
          idle_close_delay_ms: 500,
          min_pane_lifetime_ms: 500,
          close_grace_ms: 1000,
          poll_interval_ms: 500,
        }),
      );

      const parent = await s.createSession({ title: "e2e parent" });
      // The plugin loaded: it logged its start, and the bridge it started said ready on tmux.
      await until(
        "the bridge's ready line",
        () => bridgeSaid(readText(log)).some((m) => m.type === "ready" && m.backend === "tmux"),
        context,
      );
      timings.pluginReady = ms();
      for (const pid of s.children()) if (cmdline(pid)?.includes("bridge")) bridgePids.add(pid);
      assert.equal(bridgePids.size, 1, `one bridge child of opencode: ${s.children()}`);

      // Waits watch tmux itself (the plugin's log sees the bridge's lines only when OpenCode's
      // busy event loop gets to them, seconds late on a loaded machine); the log then confirms
      // the reason muxbridge gave.
      const panesOf = async (sessionId: string) =>
        (await tmux.tmux(["list-panes", "-a", "-F", "#{pane_id} #{@muxbridge-session}"]))
          .trim().split("\n").flatMap((l) => {
            const [id, sid] = l.split(" ");
            return sid === sessionId ? [id] : [];
          });
      const said = (type: string, sessionId: string, reason?: string) =>
        bridgeSaid(readText(log)).filter((m) =>
          m.type === type && m.sessionID === sessionId &&
          (reason === undefined || m.reason === reason)
        );
      /** Waits until `sessionId` has `n` panes; returns them and the time it took. */
      const panesBecome = async (what: string, sessionId: string, n: number, ms?: number) => {
        const t = performance.now();
        let ids: string[] = [];
        await until(what, async () => (ids = await panesOf(sessionId)).length === n, context, ms);
        return { ids, ms: Math.round(performance.now() - t) };
      };

      const child = await s.createSession({ title: "e2e child", parentID: parent.id });
      const first = await panesBecome("the child's pane", child.id, 1);
      timings.createdToPaneVisible = first.ms;
      const pane1 = first.ids[0];
      await until("pane.opened", () => said("pane.opened", child.id).length === 1, context);
      assert.equal(said("pane.opened", child.id)[0].paneId, pane1);
      const [startCommand, panePid] = (await tmux.tmux([
        "display-message",
        "-p",
        "-t",
        pane1,
        "#{pane_start_command}\t#{pane_pid}",
      ])).trim().split("\t");
      assert.match(startCommand, new RegExp(`attach ${s.url} --session ${child.id} --dir `));
      // The pane runs muxbridge's start command, the attach its child (pane_program.ts).
      await until("the attach process", () => attachUnder(Number(panePid)) !== null);
      const attachPid = attachUnder(Number(panePid))!;
      assert.deepEqual(cmdline(attachPid)?.slice(1), [
        "attach",
        s.url,
        "--session",
        child.id,
        "--dir",
        s.project,
      ]);

      // A prompt: busy (the first prompt of a server's life is slow), then idle: the pane closes.
      await s.prompt(child.id, "first");
      const idleClose = await panesBecome("the idle close", child.id, 0, 90_000);
      timings.firstPromptToPaneGone = idleClose.ms;
      await until("pane.closed idle", () => said("pane.closed", child.id, "idle").length === 1);
      await until("the attach process to end", () => !processes.alive(attachPid));
      await until("its pane's start command to end", () => !processes.alive(Number(panePid)));

      // The next prompt reopens it; held by the mock, the child stays busy while it is deleted.
      s.mock.hold();
      const tPrompt = performance.now();
      await s.prompt(child.id, "second");
      const busySeen = s.waitBusy(child.id, true).then(() => performance.now());
      const reopened = await panesBecome("the reopened pane", child.id, 1);
      timings.promptToPaneVisible = Math.round(performance.now() - tPrompt);
      timings.promptToBusyPolled = Math.round((await busySeen) - tPrompt);
      const pane2 = reopened.ids[0];
      assert.notEqual(pane2, pane1);
      const tDelete = performance.now();
      await s.deleteSession(child.id);
      await panesBecome("the delete close", child.id, 0);
      timings.deleteToPaneGone = Math.round(performance.now() - tDelete);
      await until(
        "pane.closed deleted",
        () => said("pane.closed", child.id, "deleted").length === 1,
      );
      s.mock.release();

      // A bridge killed with SIGKILL leaves its pane behind; the plugin restarts the bridge, which
      // takes the busy child's pane over (pane.opened for the same pane) and closes it on idle.
      const child2 = await s.createSession({ title: "e2e orphan", parentID: parent.id });
      const [orphan] = (await panesBecome("child2's pane", child2.id, 1)).ids;
      s.mock.hold();
      await s.prompt(child2.id, "third");
      await s.waitBusy(child2.id, true);
      const [bridgePid] = bridgePids;
      const tKill = performance.now();
      Deno.kill(bridgePid, "SIGKILL");
      await until("the bridge to die", () => !processes.alive(bridgePid));
      await until("the plugin's restart", () => /restart 1 of 3/.test(readText(log)), context);
      await until(
        "the restarted bridge's ready",
        () => bridgeSaid(readText(log)).filter((m) => m.type === "ready").length === 2,
        context,
      );
      timings.killToRestartedReady = Math.round(performance.now() - tKill);
      for (const pid of s.children()) if (cmdline(pid)?.includes("bridge")) bridgePids.add(pid);
      await until(
        "the restarted bridge to adopt the busy child's pane",
        // The first bridge's own pane.opened for this pane is in the log too: wait for the second.
        () =>
          bridgeSaid(readText(log)).filter((m) =>
            m.type === "pane.opened" && m.sessionID === child2.id && m.paneId === orphan
          ).length === 2,
        context,
      );
      assert.deepEqual(await panesOf(child2.id), [orphan], "the orphan survived its bridge");

      const cliEnv = {
        ...tmux.env,
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        MUXBRIDGE_CONFIG: configPath,
        MUXBRIDGE_STATE_DIR: state,
        XDG_CONFIG_HOME: `${work}/xdg`,
      };
      const tCleanup = performance.now();
      const cleanup = await runCli(["cleanup", "--json"], cliEnv);
      timings.cleanupCli = Math.round(performance.now() - tCleanup);
      assert.equal(cleanup.code, 0, cleanup.stderr);
      const report = JSON.parse(cleanup.stdout);
      assert.deepEqual(
        report.kept.map((e: Record<string, string>) => [e.paneId, e.reason]),
        [[orphan, "owner running"]],
        "the adopted pane belongs to the running bridge now",
      );
      assert.deepEqual(report.closed, []);

      s.mock.release();
      await s.waitBusy(child2.id, false, 60_000);
      await until(
        "the restarted bridge to close the adopted pane on idle",
        async () => (await panesOf(child2.id)).length === 0,
        context,
      );
      await until(
        "pane.closed idle for the adopted pane",
        () => said("pane.closed", child2.id, "idle").length === 1,
        context,
      );

      // OpenCode's own output carries nothing from the plugin or the bridge.
      assert.deepEqual(
        s.stdout().trim().split("\n"),
        [
          "Warning: OPENCODE_SERVER_PASSWORD is not set; server is unsecured.",
          `opencode server listening on ${s.url}`,
        ],
      );
      assert.equal(s.stderr(), "");

      // When OpenCode goes, its bridge's input ends (and, OpenCode being the pane's session
      // leader, the bridge gets SIGHUP too): it shuts down in order, without crashing on the
      // vanished stdout, and exits.
      await s.close();
      await until("the bridges to exit", () => [...bridgePids].every((p) => !processes.alive(p)));
      // The bridge writes its stderr straight to the log file (not through OpenCode), so the
      // line is there once it exited; the wait only absorbs a slow file system under load.
      await until(
        "the bridge's orderly shutdown in its log",
        () => /shutting down \((end of input|SIGHUP|SIGTERM)\)/.test(readText(log)),
        context,
        15_000,
      );
      const tail = readText(log);
      assert.ok(!/Uncaught|EPIPE/.test(tail), tail);
    } finally {
      await server?.close();
      // The bridges end with OpenCode (their input ends); make sure, then stop tmux.
      await waitFor(clock, () => [...bridgePids].every((p) => !processes.alive(p)), {
        deadline: clock.now() + 10_000,
      });
      for (const p of bridgePids) {
        if (processes.alive(p)) {
          try {
            Deno.kill(p, "SIGKILL");
          } catch { /* gone */ }
        }
      }
      timings.total = ms();
      console.log(`e2e_plugin timings (ms): ${JSON.stringify(timings)}`);
      await tmux.close();
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "real OpenCode keeps answering and stays quiet with a stalled, a crashing and a missing bridge",
  ...requires("the plugin end-to-end tests", OPENCODE),
  async fn() {
    const work = await Deno.makeTempDir({ prefix: "muxbridge-e2e-variants-" });
    let server: OpencodeServer | undefined;
    try {
      // The stalled fake never reads its input, so unlike a real bridge it does not end with
      // OpenCode: it writes its pid (kept by `exec`) for the test to stop it.
      const fakes: Record<string, string> = {
        stall: `echo $$ >> "${work}/stall.pids"
echo '{"type":"ready","protocol":1,"version":"fake","backend":null}'
exec sleep 600`,
        crash: `echo start >> "${work}/crash.starts"
echo "crash stderr" >&2
exit 3`,
      };
      const plugins: Array<[string, Record<string, unknown>]> = [];
      for (const name of ["stall", "crash", "missing"]) {
        // One copy of the plugin per variant (OpenCode loads each file once), each with its own
        // package.json as the real one has.
        const plugin = await writePlugin(`${work}/${name}`);
        const bin = `${work}/${name}-bridge`;
        if (fakes[name]) {
          await Deno.writeTextFile(bin, `#!/bin/sh\n${fakes[name]}\n`);
          await Deno.chmod(bin, 0o755);
        }
        plugins.push([plugin, {
          instance: name, // three bridges in one OpenCode on purpose (one per variant)
          bin,
          log: `${work}/${name}.log`,
          queueBytes: 1024,
          backoffMs: 50,
          maxRestarts: 2,
          stopGraceMs: 200,
        }]);
      }
      const t0 = performance.now();
      server = await startOpencodeServer({ plugins });
      const s = server;
      console.log(`e2e_plugin variants: server ready after ${s.startMs} ms`);
      const logs = () =>
        ["stall", "crash", "missing"].map((n) => `${n}:\n${readText(`${work}/${n}.log`)}`)
          .join("\n");
      const parent = await s.createSession({ title: "variants parent" });
      await until(
        "every variant to settle",
        () =>
          readText(`${work}/missing.log`).includes("cannot start") &&
          readText(`${work}/crash.log`).includes("giving up after 2 restarts") &&
          readText(`${work}/stall.log`).includes('"type":"ready"'),
        logs,
      );
      // Fill the stalled bridge's pipe (64 KiB) and the queue: big titles make big
      // session.updated events.
      const child = await s.createSession({ title: "variants child", parentID: parent.id });
      for (let i = 0; i < 12; i++) {
        const res = await s.request("PATCH", `/session/${child.id}`, {
          title: `${i} ${"t".repeat(10_000)}`,
        });
        assert.equal(res.status, 200, await res.text());
      }
      await until(
        "the stalled plugin's full queue",
        () => readText(`${work}/stall.log`).includes("queue full"),
        logs,
        20_000,
      );
      // OpenCode still answers, and runs a prompt to the end.
      const health = await s.request("GET", "/global/health");
      assert.equal((await health.json()).healthy, true);
      await s.prompt(child.id);
      await s.waitBusy(child.id, true, 60_000).catch(() => {}); // a short turn may be missed
      await s.waitBusy(child.id, false, 90_000);
      const list = await s.request("GET", "/session");
      assert.ok((await list.json()).some((x: { id: string }) => x.id === child.id));

      assert.equal(readText(`${work}/crash.starts`).trim().split("\n").length, 3);
      assert.equal(readText(`${work}/missing.log`).match(/cannot start/g)?.length, 1);
      assert.match(readText(`${work}/crash.log`), /crash stderr/);
      assert.deepEqual(
        s.stdout().trim().split("\n"),
        [
          "Warning: OPENCODE_SERVER_PASSWORD is not set; server is unsecured.",
          `opencode server listening on ${s.url}`,
        ],
      );
      assert.equal(s.stderr(), "", "nothing from the plugins on OpenCode's stderr");
      console.log(`e2e_plugin variants: ${Math.round(performance.now() - t0)} ms in all`);
    } finally {
      await server?.close();
      for (const pid of readText(`${work}/stall.pids`).split("\n").filter((l) => l).map(Number)) {
        await stopStaller(pid);
      }
      await Deno.remove(work, { recursive: true }).catch(() => {});
    }
  },
});

/** Stops a stalled fake bridge by pid, if that pid still runs its `sleep 600`. */
async function stopStaller(pid: number): Promise<void> {
  const isStaller = () => {
    try {
      return Deno.readTextFileSync(`/proc/${pid}/cmdline`) === "sleep\x00600\x00";
    } catch {
      return false;
    }
  };
  if (!isStaller()) return;
  try {
    Deno.kill(pid, "SIGKILL");
  } catch { /* ended meanwhile */ }
  await waitFor(clock, () => !processes.alive(pid), { deadline: clock.now() + 10_000 });
}
