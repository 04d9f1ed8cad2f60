/**
 * Security findings about credentials (issue 17, items 2 and 8), each reproduced as it was
 * found: the server password goes only to the origin (scheme, host, port) it was given for:
 * never to a server a stale or planted pane record names, in `cleanup`, a starting bridge's
 * reclaim, adoption or a poll; URLs carrying `user:pass@` are refused everywhere; a
 * `bridge.hello` cannot name programs, files or sockets. Real tmux, loopback listeners.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createPaneStore, type PaneRecordInput } from "../lib/session/pane_store.ts";
import { events, startBridge } from "./helpers/bridge_process.ts";
import { runCli } from "./helpers/cli_process.ts";
import { serveFakeOpencode } from "./helpers/fake_opencode_server.ts";
import { listen } from "./helpers/listener.ts";
import { isType, tmuxBridgeEnv } from "./helpers/real_life.ts";
import { startTmuxServer, type TmuxServer } from "./helpers/tmux_server.ts";
import { loadPlugin, pluginInput } from "./helpers/load_plugin.ts";
import { until } from "./helpers/until.ts";
import { provenFields } from "./helpers/tmux_record.ts";

const SECRET = "victim-Secret-1234";
const unauthorized = () => new Response(null, { status: 401 });

interface Rig {
  dir: string;
  server: TmuxServer;
  env: Record<string, string>;
  /** A pane of "a dead bridge", recorded for `server` (a URL). */
  orphan(server: string, sessionId?: string): Promise<string>;
  close(): Promise<void>;
}

async function rig(): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-sec-cred-"));
  const server = await startTmuxServer();
  const env = await tmuxBridgeEnv(server, dir, {
    opencode_bin: "true",
    poll_interval_ms: 200,
    idle_close_delay_ms: 200,
    min_pane_lifetime_ms: 200,
  });
  return {
    dir,
    server,
    env,
    async orphan(url, sessionId = "ses_stale1") {
      const paneId = await server.userPane();
      const record: PaneRecordInput = {
        sessionId,
        paneId,
        backend: "tmux",
        title: "stale",
        openedAt: "2026-11-30T12:00:00.000Z",
        owner: "999999:1",
        server: url,
        directory: dir,
        // As muxbridge records a pane it opened: the server and the program it runs.
        ...await provenFields(server, paneId),
      };
      createPaneStore(env.MUXBRIDGE_STATE_DIR).put(record);
      return paneId;
    },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const noPassword = (seen: Array<{ authorization: string | null }>) =>
  seen.every((s) => s.authorization === null);

Deno.test("cleanup sends OPENCODE_SERVER_PASSWORD to no server a stale record names (auth_failed, kept)", async () => {
  const r = await rig();
  const other = listen(unauthorized);
  try {
    const pane = await r.orphan(other.url);
    const out = await runCli(["cleanup", "--json"], {
      env: { ...r.env, OPENCODE_SERVER_PASSWORD: SECRET },
    });
    assert.ok(other.seen.length > 0, "the stale server was asked");
    assert.ok(
      noPassword(other.seen),
      `a password went to ${other.url}: ${JSON.stringify(other.seen)}`,
    );
    assert.equal(out.code, 0, out.stderr);
    const report = JSON.parse(out.stdout);
    assert.deepEqual(report.closed, []);
    assert.equal(report.kept[0].paneId, pane);
    assert.match(report.kept[0].reason, /^auth_failed/);
    assert.equal((await r.server.run(["list-panes", "-t", pane])).code, 0, "the pane is kept");
  } finally {
    await other.close();
    await r.close();
  }
});

Deno.test("cleanup --url sends the password to that server only", async () => {
  const r = await rig();
  const own = serveFakeOpencode();
  own.fake.password = SECRET;
  own.fake.knowAll = true;
  const other = listen(unauthorized);
  try {
    const mine = await r.orphan(own.url, "ses_mine1");
    await r.orphan(other.url, "ses_theirs1");
    const out = await runCli(["cleanup", "--url", `${own.url}/`, "--json"], {
      env: { ...r.env, OPENCODE_SERVER_PASSWORD: SECRET },
    });
    assert.equal(out.code, 0, out.stderr);
    const report = JSON.parse(out.stdout);
    assert.deepEqual(report.closed.map((e: { paneId: string }) => e.paneId), [mine]);
    assert.ok(own.fake.authorizations.length > 0, "the own server got the password");
    assert.ok(noPassword(other.seen), JSON.stringify(other.seen));
  } finally {
    await own.close();
    await other.close();
    await r.close();
  }
});

Deno.test("a starting bridge reclaims without sending its password to another server, and adopts no pane of it", async () => {
  const r = await rig();
  const own = serveFakeOpencode();
  own.fake.password = SECRET;
  own.fake.knowAll = true;
  const locked = listen(unauthorized); // a server that wants a password
  const open = serveFakeOpencode(); // a server without one, where the stale session is busy
  open.fake.busy("ses_busyElsewhere1");
  try {
    const kept = await r.orphan(locked.url, "ses_locked1");
    const foreign = await r.orphan(open.url, "ses_busyElsewhere1");
    const bridge = startBridge(["--url", own.url, "--dir", r.dir], {
      ...r.env,
      OPENCODE_SERVER_PASSWORD: SECRET,
    });
    try {
      await bridge.waitFor(isType("ready"));
      await until("the reclaim to ask both stale servers", () =>
        locked.seen.length > 0 &&
        open.fake.requests.some((q) => q.startsWith("GET /session/status")), { ms: 15_000 });
      await bridge.send({ type: "bridge.ping", id: 1 });
      await bridge.waitFor(isType("pong"));
      assert.ok(noPassword(locked.seen), JSON.stringify(locked.seen));
      assert.deepEqual(open.fake.authorizations, [], "no password to the open server either");
      await bridge.endInput();
      assert.deepEqual(await bridge.waitFor(isType("bye")), { type: "bye", closed: 0 });
      assert.ok(
        !bridge.lines.some((l) => l.type === "pane.opened" && l.paneId === foreign),
        "a pane of another server is not adopted",
      );
    } finally {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
    }
    for (const pane of [kept, foreign]) {
      assert.equal((await r.server.run(["list-panes", "-t", pane])).code, 0, `${pane} kept`);
    }
  } finally {
    await own.close();
    await locked.close();
    await open.close();
    await r.close();
  }
});

Deno.test("a bridge.hello naming another server without auth gets none of the old server's password", async () => {
  const r = await rig();
  const own = serveFakeOpencode();
  own.fake.password = SECRET;
  const elsewhere = listen(unauthorized);
  try {
    const bridge = startBridge(["--url", own.url, "--dir", r.dir], {
      ...r.env,
      OPENCODE_SERVER_PASSWORD: SECRET,
    });
    try {
      await bridge.waitFor(isType("ready"));
      await bridge.send({ type: "bridge.hello", serverUrl: elsewhere.url, directory: r.dir });
      await bridge.send(events.created("ses_helloParent", "p", null, r.dir));
      await bridge.send(events.created("ses_helloChild", "c", "ses_helloParent", r.dir));
      await bridge.send(events.status("ses_helloChild", "busy"));
      const skipped = await bridge.waitFor(isType("pane.skipped", "ses_helloChild"));
      assert.equal(skipped.reason, "auth_failed");
      assert.ok(elsewhere.seen.length > 0);
      assert.ok(noPassword(elsewhere.seen), JSON.stringify(elsewhere.seen));
      await bridge.endInput();
      await bridge.waitFor(isType("bye"));
    } finally {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
    }
  } finally {
    await own.close();
    await elsewhere.close();
    await r.close();
  }
});

Deno.test("server URLs carrying user:pass@ are refused by spawn, doctor, cleanup, bridge and bridge.hello, never echoed", async () => {
  const url = `http://opencode:${SECRET}@127.0.0.1:4096/`;
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-sec-url-"));
  const env = { HOME: dir, MUXBRIDGE_STATE_DIR: `${dir}/state`, MUXBRIDGE_BACKEND: "none" };
  try {
    for (
      const args of [
        ["spawn", "--session", "ses_a1", "--url", url, "--dir", "/tmp"],
        ["cleanup", "--url", url],
        ["doctor", "--url", url, "--json"],
        ["bridge", "--url", url, "--dir", dir],
      ]
    ) {
      const r = await runCli(args, { env });
      assert.equal(r.code, 2, `${args[0]}: ${r.stderr}`);
      assert.match(r.stderr, /carries credentials \(user:pass@\).*OPENCODE_SERVER_PASSWORD/);
      assert.ok(!r.stderr.includes(SECRET) && !r.stdout.includes(SECRET), args[0]);
    }
    const bridge = startBridge(["--dir", dir], {
      MUXBRIDGE_STATE_DIR: `${dir}/state`,
      MUXBRIDGE_BACKEND: "none",
      HOME: dir,
    });
    try {
      await bridge.waitFor(isType("ready"));
      await bridge.send({ type: "bridge.hello", serverUrl: url, directory: dir });
      await bridge.send({ type: "bridge.ping", id: 1 });
      await bridge.waitFor(isType("pong"));
      const errors = bridge.lines.filter((l) => l.type === "error");
      assert.equal(errors.length, 1, JSON.stringify(bridge.lines));
      for (const e of errors) assert.match(String(e.message), /carries credentials/);
      await bridge.endInput();
      await bridge.waitFor(isType("bye"));
      await bridge.status;
      const all = JSON.stringify(bridge.lines) + bridge.stderr();
      assert.ok(!all.includes(SECRET), "the password is never repeated");
    } finally {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("bridge.hello cannot name a program, a file, a socket or a session; other keys still apply", async () => {
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-sec-hello-"));
  try {
    const bridge = startBridge(["--dir", dir], {
      MUXBRIDGE_STATE_DIR: `${dir}/state`,
      MUXBRIDGE_BACKEND: "none",
      HOME: dir,
    });
    const forbidden: Array<[string, Record<string, unknown>]> = [
      ["opencode_bin", { opencode_bin: `${dir}/evil` }],
      ["attention_command", { attention_command: [`${dir}/evil`] }],
      ["tmux.bin", { tmux: { bin: `${dir}/evil` } }],
      ["kitty.bin", { kitty: { bin: `${dir}/evil` } }],
      ["herdr.bin", { herdr: { bin: `${dir}/evil` } }],
      ["log_file", { log_file: `${dir}/.bashrc` }],
      ["state_dir", { state_dir: `${dir}/planted` }],
      ["tmux.socket_path", { tmux: { socket_path: `${dir}/their.sock` } }],
      ["kitty.listen_on", { kitty: { listen_on: "tcp:203.0.113.1:5000" } }],
      ["provider.command", { provider: { command: [`${dir}/evil`] } }],
      ["wezterm.bin", { wezterm: { bin: `${dir}/evil` } }],
      ["wezterm.socket_path", { wezterm: { socket_path: `${dir}/their.sock` } }],
      ["tmux.socket_name", { tmux: { socket_name: "../evil/s" } }],
      ["tmux.target", { tmux: { target: "their-session:0" } }],
      ["zellij.session", { zellij: { session: "theirs" } }],
      ["zellij.bin", { zellij: { bin: `${dir}/evil` } }],
      ["herdr.session", { herdr: { session: "theirs" } }],
      ["cmux.bin", { cmux: { bin: `${dir}/evil` } }],
      ["cmux.socket_path", { cmux: { socket_path: `${dir}/their.sock` } }],
    ];
    try {
      await bridge.waitFor(isType("ready"));
      for (const [, config] of forbidden) {
        await bridge.send({
          type: "bridge.hello",
          serverUrl: "http://127.0.0.1:1",
          directory: dir,
          config,
        });
      }
      await bridge.send({
        type: "bridge.hello",
        serverUrl: "http://127.0.0.1:1",
        directory: dir,
        config: { idle_close_delay_ms: 5 },
      });
      await bridge.send({ type: "bridge.ping", id: 1 });
      await bridge.waitFor(isType("pong"));
      const errors = bridge.lines.filter((l) => l.type === "error");
      assert.deepEqual(errors.map((e) => e.line), forbidden.map((_, i) => i + 1));
      forbidden.forEach(([key], i) => {
        assert.equal(errors[i].code, "invalid_config");
        assert.match(String(errors[i].message), new RegExp(`key "${key.replace(".", "\\.")}"`));
      });
      await bridge.endInput();
      await bridge.waitFor(isType("bye"));
    } finally {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
    }
    for (const name of [".bashrc", "planted", "evil"]) {
      assert.ok(!(await Deno.stat(`${dir}/${name}`).catch(() => null)), `${name} was created`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("the plugin keeps a server URL's user:pass@ off the bridge's argv and out of its log", async () => {
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-sec-plugin-"));
  try {
    const bin = `${dir}/fake-bridge`;
    await Deno.writeTextFile(
      bin,
      `#!/bin/sh\nprintf '%s\\n' "$@" > "$5/argv"\nexec cat > "$5/stdin.ndjson"\n`,
    );
    await Deno.chmod(bin, 0o755);
    const log = `${dir}/state/bridge.log`;
    const hooks = await loadPlugin(
      `${dir}/state`,
      pluginInput(dir, `http://opencode:${SECRET}@127.0.0.1:4096/`),
      { bin, log },
    );
    await until("the fake bridge to start", async () => {
      try {
        return (await Deno.readTextFile(`${dir}/argv`)).includes("--url");
      } catch {
        return false;
      }
    }, { ms: 15_000 });
    await hooks.dispose?.();
    const argv = await Deno.readTextFile(`${dir}/argv`);
    const hello = await Deno.readTextFile(`${dir}/stdin.ndjson`);
    const logText = await Deno.readTextFile(log);
    for (const [what, text] of [["argv", argv], ["hello", hello], ["log", logText]]) {
      assert.ok(!text.includes(SECRET), `the password is in the bridge's ${what}: ${text}`);
    }
    assert.match(argv, /^http:\/\/127\.0\.0\.1:4096\/$/m);
    assert.match(logText, /carries credentials .*OPENCODE_SERVER_PASSWORD/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
