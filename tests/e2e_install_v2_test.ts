/**
 * End to end with the REAL OpenCode 2.x (npm `@opencode/cli`, pinned) beside the real 1.x:
 * `muxbridge install` finds both lines (fake-free: `opencode` is 1.x, `opencode2` is 2.x on
 * PATH) and installs both plugins; 2.x's service lists both as active (`GET /api/plugin`: the
 * folder `muxbridge`, with its TUI part, and the 1.x file `muxbridge-v1`, which 2.x loads from
 * the same folder); a real 2.x TUI in a private tmux runs the TUI part, which starts the bridge
 * (first a recording stand-in, to see exactly what it is given: the pane's environment and a tui
 * hello naming the service) and ends it when the TUI exits; a second TUI runs the real recorded
 * muxbridge, whose bridge takes that hello and says ready; after `muxbridge uninstall` the
 * service lists neither. And the real 1.x with both installed runs exactly one bridge: the 2.x
 * folder in `plugins/` is no 1.x plugin.
 *
 * The service runs on a port of this test's own (its config `service.json`) and is stopped in
 * every case. The 2.x binary: `opencode2Bin()` of `tests/helpers/opencode2_home.ts`.
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { createProcesses } from "../lib/sys/processes.ts";
import { runCli } from "./helpers/cli_process.ts";
import { freePort, opencode2Bin } from "./helpers/opencode2_home.ts";
import {
  childrenOf,
  cmdline,
  opencodeBin,
  type OpencodeServer,
  startOpencodeServer,
} from "./helpers/opencode_server.ts";
import { requirement, requires, tool } from "./helpers/requires.ts";
import { runTag } from "./helpers/run_tag.ts";
import { startTmuxServer } from "./helpers/tmux_server.ts";
import { until } from "./helpers/until.ts";

const clock = createRealClock();
const processes = createProcesses();

const V2 = opencode2Bin();
const V1 = opencodeBin();
const NEEDS = [
  requirement("OpenCode 2.x", V2 !== null, "run scripts/setup.sh (tools/opencode2)"),
  requirement("OpenCode 1.x", V1 !== null, "npm install (opencode-ai is a devDependency)"),
  tool("tmux"),
];

/** Records its argv, the terminal variables it inherited and its stdin; ends with its input. */
const RECORDER = `d="$MUXBRIDGE_E2E_RECORD"
printf '%s\\n' "$@" > "$d/argv"
printf 'TMUX_PANE=%s\\n' "$TMUX_PANE" > "$d/env"
echo '{"type":"ready","protocol":1,"version":"0.1.0","backend":null}'
cat >> "$d/stdin.ndjson"
echo ended >> "$d/ended"`;

Deno.test({
  name:
    "real OpenCode 2.x: install for both lines, the service lists muxbridge and muxbridge-v1 active, a real TUI runs the TUI part (one bridge, tui hello, ended on exit), uninstall unlists both",
  ...requires("the OpenCode 2.x install end-to-end test", NEEDS),
  async fn() {
    const base = await Deno.makeTempDir({ prefix: "muxbridge-e2e-v2-" });
    const tmux = await startTmuxServer({ width: 160, height: 45 });
    const port = freePort();
    const password = crypto.randomUUID();
    const config = `${base}/config/opencode`;
    const project = `${base}/project`;
    const record = `${base}/record`;
    for (const d of [config, project, record, `${base}/bin`, `${base}/home`, `${base}/state`]) {
      await Deno.mkdir(d, { recursive: true });
    }
    await Deno.writeTextFile(`${config}/service.json`, JSON.stringify({ port, password }));
    await Deno.symlink(V1!, `${base}/bin/opencode`);
    await Deno.symlink(V2!, `${base}/bin/opencode2`);
    const recorder = `${base}/recorder`;
    await Deno.writeTextFile(recorder, `#!/bin/sh\n${RECORDER}\n`);
    await Deno.chmod(recorder, 0o755);
    const env: Record<string, string> = {
      HOME: `${base}/home`,
      XDG_CONFIG_HOME: `${base}/config`,
      XDG_DATA_HOME: `${base}/data`,
      XDG_CACHE_HOME: `${base}/cache`,
      XDG_STATE_HOME: `${base}/state`,
      PATH: `${base}/bin:/usr/bin:/bin`,
      OPENCODE_DISABLE_AUTOUPDATE: "1",
      OPENCODE_DISABLE_SHARE: "1",
      OPENCODE_DISABLE_MODELS_FETCH: "1",
      OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
      OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
      OPENCODE_DISABLE_CLAUDE_CODE: "1",
      npm_config_offline: "true",
      npm_config_registry: "http://127.0.0.1:9/",
      // Only for `deno run`: its module cache would otherwise start empty in the new HOME.
      DENO_DIR: Deno.env.get("DENO_DIR") ??
        `${Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME")}/.cache`}/deno`,
      ...runTag(),
    };
    const stateFile = `${base}/state/opencode/service.json`;
    const url = `http://127.0.0.1:${port}`;
    const auth = `Basic ${btoa(`opencode:${password}`)}`;
    const opencode2 = (args: string[]) =>
      new Deno.Command(V2!, {
        args,
        env,
        clearEnv: true,
        cwd: project,
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
        signal: AbortSignal.timeout(60_000),
      }).output();
    /** The non-builtin plugins the service lists: id → status. */
    const plugins = async (): Promise<Record<string, { status: string; tui: boolean }>> => {
      const res = await fetch(`${url}/api/plugin`, {
        headers: { authorization: auth },
        signal: AbortSignal.timeout(10_000),
      });
      const body = await res.json();
      const out: Record<string, { status: string; tui: boolean }> = {};
      for (const p of body.data ?? []) {
        if (p.source?.type === "builtin") continue;
        out[p.id] = { status: p.state?.status, tui: p.features?.tui === true };
      }
      return out;
    };
    const servicePids = new Set<number>();
    const noteService = () => {
      try {
        servicePids.add(JSON.parse(Deno.readTextFileSync(stateFile)).pid);
      } catch { /* not running (yet) */ }
    };
    const read = (p: string) => {
      try {
        return Deno.readTextFileSync(p);
      } catch {
        return "";
      }
    };
    let pane = "";
    try {
      // ------------------------------------------------------------ install, both lines
      const installed = await runCli(["install", "--json"], { env, timeoutMs: 120_000 });
      assert.equal(installed.code, 0, installed.stderr);
      assert.deepEqual(JSON.parse(installed.stdout).opencode.lines, ["1.x", "2.x"]);

      // ------------------------------------------------------------ the service loads both
      const started = await opencode2(["service", "start"]);
      assert.equal(started.code, 0, new TextDecoder().decode(started.stderr));
      await until("the service's registration", () => read(stateFile) !== "", { ms: 60_000 });
      noteService();
      let listed: Record<string, { status: string; tui: boolean }> = {};
      await until("both plugins active", async () => {
        listed = await plugins().catch(() => ({}));
        return listed["muxbridge"]?.status === "active" &&
          listed["muxbridge-v1"]?.status === "active";
      }, { ms: 60_000, maxIntervalMs: 500, context: () => JSON.stringify(listed) });
      assert.deepEqual(listed["muxbridge"], { status: "active", tui: true });
      assert.deepEqual(listed["muxbridge-v1"], { status: "active", tui: false });

      // ------------------------------------------------------------ a real TUI runs the TUI part
      /** Starts a 2.x TUI in a new tmux window with `extra` in its environment. */
      const startTui = async (extra: Record<string, string>) =>
        (await tmux.tmux([
          "new-window",
          "-d",
          "-P",
          "-F",
          "#{pane_id}",
          "-c",
          project,
          ...Object.entries({ ...env, ...extra }).flatMap(([k, v]) => ["-e", `${k}=${v}`]),
          "--",
          V2!,
        ])).trim();
      pane = await startTui({ MUXBRIDGE_BIN: recorder, MUXBRIDGE_E2E_RECORD: record });
      const screen = () => tmux.tmux(["capture-pane", "-p", "-t", pane]).catch(() => "");
      await until("the bridge's hello", () => read(`${record}/stdin.ndjson`) !== "", {
        ms: 120_000,
        maxIntervalMs: 200,
        context: () => read(`${base}/state/muxbridge/bridge.log`),
      });
      noteService();
      const hello = JSON.parse(read(`${record}/stdin.ndjson`).split("\n")[0]);
      // The TUI paired with its service: the bridge gets a token, never the service password.
      const { auth, ...rest } = hello;
      assert.deepEqual(rest, {
        type: "bridge.hello",
        serverUrl: url,
        directory: hello.directory,
        opencode: "2.1.2",
        scope: "tui",
      });
      assert.equal(auth?.username, "opencode");
      assert.ok(typeof auth?.password === "string" && auth.password !== password, "a paired token");
      assert.equal(await Deno.realPath(hello.directory), await Deno.realPath(project));
      assert.deepEqual(read(`${record}/argv`).trim().split("\n"), [
        "bridge",
        "--dir",
        hello.directory,
      ]);
      assert.equal(read(`${record}/env`).trim(), `TMUX_PANE=${pane}`, "the terminal's env");

      // The TUI exits (Ctrl+C on its home screen): the bridge's input ends with it.
      await until("the TUI's prompt", async () => /Ask anything/.test(await screen()), {
        ms: 60_000,
        maxIntervalMs: 200,
        context: () => "",
      });
      await tmux.run(["send-keys", "-t", pane, "C-c"]);
      await until("the bridge's end", () => read(`${record}/ended`) !== "", {
        ms: 30_000,
        maxIntervalMs: 100,
        context: () => read(`${base}/state/muxbridge/bridge.log`),
      });
      assert.equal(read(`${record}/ended`).trim().split("\n").length, 1, "one bridge");
      const pluginLog = `${base}/state/muxbridge/bridge.log`;

      // The real muxbridge `install` recorded takes the TUI's hello and says ready.
      const before = read(pluginLog).length;
      const later = () => read(pluginLog).slice(before);
      pane = await startTui({});
      await until("the real bridge's ready", () => /bridge: \{"type":"ready"/.test(later()), {
        ms: 120_000,
        maxIntervalMs: 200,
        context: later,
      });
      assert.match(later(), /starting ".+" \(from muxbridge\.json\) for the TUI of /);
      assert.doesNotMatch(later(), /"type":"error"/, "the hello was taken");
      // The bridge is the TUI's child (one), and ends with the TUI.
      const tuiPid = Number(await tmux.tmux(["display", "-p", "-t", pane, "#{pane_pid}"]));
      const bridges = childrenOf(tuiPid).filter((pid) => cmdline(pid)?.includes("bridge"));
      assert.equal(bridges.length, 1, `the TUI's bridges: ${JSON.stringify(bridges)}`);
      await until("the TUI's prompt", async () => /Ask anything/.test(await screen()), {
        ms: 60_000,
        maxIntervalMs: 200,
      });
      await tmux.run(["send-keys", "-t", pane, "C-c"]);
      await until("the real bridge's end", () => !processes.alive(bridges[0]), {
        ms: 30_000,
        maxIntervalMs: 100,
        context: later,
      });

      // ------------------------------------------------------------ uninstall: both unlisted
      const removed = await runCli(["uninstall", "--json"], { env });
      assert.equal(removed.code, 0, removed.stderr);
      await until("neither plugin listed", async () => {
        listed = await plugins().catch(() => listed);
        return !listed["muxbridge"] && !listed["muxbridge-v1"];
      }, { ms: 60_000, maxIntervalMs: 500, context: () => JSON.stringify(listed) });
    } finally {
      await tmux.close();
      noteService();
      await opencode2(["service", "stop"]).catch(() => {});
      for (const pid of servicePids) {
        const gone = await waitFor(clock, () => !processes.alive(pid), {
          deadline: clock.now() + 10_000,
          maxIntervalMs: 100,
        });
        if (!gone) {
          try {
            Deno.kill(-pid, "SIGKILL"); // the service leads its own process group
          } catch {
            try {
              Deno.kill(pid, "SIGKILL");
            } catch { /* gone meanwhile */ }
          }
        }
      }
      await Deno.remove(base, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test({
  name:
    "real OpenCode 1.x with both plugins installed runs one bridge: plugins/muxbridge (the 2.x folder) is no 1.x plugin",
  ...requires("the OpenCode 1.x side of both installs", [
    requirement("OpenCode 1.x", V1 !== null, "npm install (opencode-ai is a devDependency)"),
  ]),
  async fn() {
    const base = await Deno.makeTempDir({ prefix: "muxbridge-e2e-both-v1-" });
    let server: OpencodeServer | undefined;
    try {
      const record = `${base}/record`;
      await Deno.mkdir(record);
      await Deno.mkdir(`${base}/config/opencode`, { recursive: true });
      const recorder = `${base}/recorder`;
      await Deno.writeTextFile(
        recorder,
        `#!/bin/sh\n${RECORDER.replace("cat >>", 'echo start >> "$d/starts"; cat >>')}\n`,
      );
      await Deno.chmod(recorder, 0o755);
      // Both lines, as `muxbridge install` with nothing found writes them.
      const installed = await runCli(["install", "--json"], {
        env: { HOME: `${base}/home`, XDG_CONFIG_HOME: `${base}/config`, PATH: "/usr/bin:/bin" },
      });
      assert.equal(installed.code, 0, installed.stderr);
      assert.deepEqual(JSON.parse(installed.stdout).opencode.lines, ["1.x", "2.x"]);
      server = await startOpencodeServer({
        env: {
          XDG_CONFIG_HOME: `${base}/config`, // where install wrote (no opencode.json: no model)
          MUXBRIDGE_BIN: recorder,
          MUXBRIDGE_E2E_RECORD: record,
        },
      });
      const s = server;
      // The server loads plugins with the first request for a directory.
      await s.request("GET", `/session?directory=${encodeURIComponent(s.project)}`);
      const starts = () => read(`${record}/starts`).trim().split("\n").filter((l) => l);
      await until("the bridge's start", () => starts().length > 0, {
        ms: 60_000,
        maxIntervalMs: 100,
        context: () => s.stderr().slice(-2000),
      });
      await new Promise((res) => setTimeout(res, 3000)); // a second load would start by now
      assert.equal(starts().length, 1, "one bridge: the 2.x folder did not load as a 1.x plugin");
      assert.deepEqual(read(`${record}/argv`).trim().split("\n").slice(0, 2), ["bridge", "--url"]);
    } finally {
      await server?.close();
      await Deno.remove(base, { recursive: true }).catch(() => {});
    }
  },
});

function read(p: string): string {
  try {
    return Deno.readTextFileSync(p);
  } catch {
    return "";
  }
}
