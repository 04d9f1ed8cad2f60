/**
 * The plugin's process-level promises, with fake bridges (sh scripts) and a fake OpenCode
 * client: one bridge per process however often it is loaded (the same realm twice, a worker
 * beside the main thread, a stale lock of a dead process), two processes side by side each
 * with their own bridge, no lock in a state directory others can write to; the forwarding
 * endpoint for plain `opencode` (401 without the secret and nothing forwarded, streaming
 * bodies, OpenCode's own password put in, gone after dispose); the recorded command; a version
 * mismatch; log lines in order.
 *
 * Waits are bounded polls of files the fakes and the plugin write; no assertion is on time.
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import v1 from "../plugin/muxbridge.ts";
import { setEnv, setEnvForFile } from "./helpers/env_scope.ts";
import { requirement, requires } from "./helpers/requires.ts";
import { pluginInput } from "./helpers/load_plugin.ts";
import { PLUGIN_V1 } from "../lib/install/plugin_source.ts";

const clock = createRealClock();
const MuxbridgePlugin = v1.server;
// A developer's own settings stay out; the state directory is this file's. Both are put back
// when this file is done, so later files of the run see the environment they got.
const STATE = Deno.makeTempDirSync({ prefix: "muxbridge-plugin-link-state-" });
setEnvForFile({
  MUXBRIDGE_BIN: undefined,
  MUXBRIDGE_PLUGIN_LOG: undefined,
  OPENCODE_SERVER_PASSWORD: undefined,
  MUXBRIDGE_STATE_DIR: STATE,
});
globalThis.addEventListener("unload", () => Deno.removeSync(STATE, { recursive: true }));
const PLUGIN_URL = new URL("../plugin/muxbridge.ts", import.meta.url);
const UNLISTENED = "http://localhost:4096/";

/** A bridge that records each start (`$5/starts`), its argv and its stdin, and says ready. */
const RECORDER = `echo "$$" >> "$5/starts"
printf '%s\\n' "$@" > "$5/argv"
echo '{"type":"ready","protocol":1,"version":"0.1.0","backend":null}'
exec cat >> "$5/stdin.ndjson"`;

function read(path: string): string {
  try {
    return Deno.readTextFileSync(path);
  } catch {
    return "";
  }
}

async function until(what: string, cond: () => boolean | Promise<boolean>, log = "") {
  const ok = await waitFor(clock, cond, { deadline: clock.now() + 20_000, maxIntervalMs: 20 });
  assert.ok(ok, `timed out waiting for ${what}${log ? `; log:\n${read(log)}` : ""}`);
}

async function fakeBridge(dir: string, script = RECORDER): Promise<string> {
  const bin = `${dir}/bridge`;
  await Deno.writeTextFile(bin, `#!/bin/sh\n${script}\n`);
  await Deno.chmod(bin, 0o755);
  return bin;
}

const status = (id: string, type: string) => ({
  type: "session.status",
  properties: { sessionID: id, status: { type } },
});

/** The lines a recorder bridge got, parsed. */
function received(dir: string): Array<Record<string, unknown>> {
  return read(`${dir}/stdin.ndjson`).split("\n").filter((l) => l).map((l) => JSON.parse(l));
}

Deno.test("MuxbridgePlugin loaded twice in one realm runs one bridge; events from either load reach it; it stops with the last dispose", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-link-" });
  try {
    const bin = await fakeBridge(dir);
    const options = { bin, log: `${dir}/bridge.log` };
    const a = await MuxbridgePlugin(pluginInput(dir), options);
    const b = await MuxbridgePlugin(pluginInput(dir), options);
    await until("the bridge's start", () => read(`${dir}/starts`) !== "", `${dir}/bridge.log`);
    // OpenCode 1.18.33 with --port hands events to the second load only.
    await b.event!({ event: status("ses_C", "busy") } as never);
    await a.event!({ event: status("ses_C", "idle") } as never);
    await until("both events", () => received(dir).length === 3);
    await a.dispose!();
    await b.event!({ event: status("ses_C", "busy") } as never);
    await until("the event after one dispose", () => received(dir).length === 4);
    await b.dispose!();
    assert.equal(read(`${dir}/starts`).trim().split("\n").length, 1, "one bridge");
    assert.deepEqual(received(dir).map((m) => m.type), [
      "bridge.hello",
      "session.status",
      "session.status",
      "session.status",
    ]);
    assert.match(read(`${dir}/bridge.log`), /stopped/);
    assert.deepEqual([...Deno.readDirSync(`${STATE}/plugin-locks`)], [], "the lock is released");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MuxbridgePlugin in a worker beside the main thread's load hands its events to the one bridge", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-link-worker-" });
  try {
    const bin = await fakeBridge(dir);
    const options = { bin, log: `${dir}/bridge.log` };
    const main = await MuxbridgePlugin(pluginInput(dir), options);
    await until("the bridge's start", () => read(`${dir}/starts`) !== "", `${dir}/bridge.log`);
    const workerCode = `
      const { default: { server: MuxbridgePlugin } } = await import(${
      JSON.stringify(PLUGIN_URL.href)
    });
      const dir = ${JSON.stringify(dir)};
      const hooks = await MuxbridgePlugin({ serverUrl: new URL("http://127.0.0.1:4096/"), directory: dir }, ${
      JSON.stringify(options)
    });
      await hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_W", status: { type: "busy" } } } });
      self.onmessage = async () => { await hooks.dispose(); self.postMessage("disposed"); };
      self.postMessage("sent");
    `;
    const url = `data:application/javascript;base64,${btoa(workerCode)}`;
    const worker = new Worker(url, { type: "module" });
    try {
      const said: string[] = [];
      worker.onmessage = (e) => said.push(e.data);
      await until("the worker's event", () => said.includes("sent"));
      await until(
        "the worker's event at the bridge",
        () => received(dir).some((m) => JSON.stringify(m).includes("ses_W")),
        `${dir}/bridge.log`,
      );
      worker.postMessage("dispose");
      await until("the worker's dispose", () => said.includes("disposed"));
    } finally {
      worker.terminate();
    }
    await main.dispose!();
    assert.equal(read(`${dir}/starts`).trim().split("\n").length, 1, "one bridge for both realms");
    assert.match(
      read(`${dir}/bridge.log`),
      /another realm of this OpenCode process runs the bridge/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MuxbridgePlugin takes over a lock a dead process with the same pid left", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-link-stale-" });
  try {
    await Deno.mkdir(`${STATE}/plugin-locks`, { recursive: true });
    await Deno.writeTextFile(
      `${STATE}/plugin-locks/${Deno.pid}-default.lock`,
      JSON.stringify({ pid: Deno.pid, start: "0" }),
    );
    const hooks = await MuxbridgePlugin(pluginInput(dir), {
      bin: await fakeBridge(dir),
      log: `${dir}/bridge.log`,
    });
    await until("the bridge's start", () => read(`${dir}/starts`) !== "", `${dir}/bridge.log`);
    await hooks.dispose!();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MuxbridgePlugin keeps no lock in a state directory other users can write to (the group included), and still runs its bridge", async () => {
  // Group-writable counts: anyone in the group could plant or remove locks there too.
  for (const mode of [0o777, 0o775, 0o770]) {
    const dir = await Deno.makeTempDir({ prefix: "muxbridge-link-shared-state-" });
    const shared = `${dir}/state`;
    await Deno.mkdir(shared);
    await Deno.chmod(shared, mode);
    let hooks;
    const restore = setEnv({ MUXBRIDGE_STATE_DIR: shared });
    try {
      hooks = await MuxbridgePlugin(pluginInput(dir), {
        bin: await fakeBridge(dir),
        log: `${dir}/bridge.log`,
      });
    } finally {
      restore();
    }
    try {
      await until("the bridge's start", () => read(`${dir}/starts`) !== "", `${dir}/bridge.log`);
      assert.match(
        read(`${dir}/bridge.log`),
        /cannot lock the process \(.*\/state: other users can write to it\); going on/,
        mode.toString(8),
      );
      assert.deepEqual([...Deno.readDirSync(shared)], [], `nothing was created in it (${mode})`);
    } finally {
      await hooks?.dispose?.();
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("MuxbridgePlugin in two processes side by side starts one bridge in each", async () => {
  const base = await Deno.makeTempDir({ prefix: "muxbridge-link-two-" });
  const procs: Deno.ChildProcess[] = [];
  try {
    for (const name of ["one", "two"]) {
      const dir = `${base}/${name}`;
      await Deno.mkdir(dir);
      const bin = await fakeBridge(dir);
      const host = `
        const { default: { server: MuxbridgePlugin } } = await import(${
        JSON.stringify(PLUGIN_URL.href)
      });
        const hooks = await MuxbridgePlugin({ serverUrl: new URL("http://127.0.0.1:4096/"), directory: ${
        JSON.stringify(dir)
      } }, { bin: ${JSON.stringify(bin)}, log: ${JSON.stringify(`${dir}/bridge.log`)} });
        await hooks.event({ event: { type: "session.status", properties: { sessionID: "ses_${name}", status: { type: "busy" } } } });
        for await (const _ of Deno.stdin.readable) { /* until the test closes stdin */ }
        await hooks.dispose();
      `;
      procs.push(
        new Deno.Command(Deno.execPath(), {
          args: ["eval", "--quiet", "--ext=ts", host],
          env: { MUXBRIDGE_STATE_DIR: STATE, MUXBRIDGE_BIN: "" },
          stdin: "piped",
          stdout: "null",
          stderr: "null",
        }).spawn(),
      );
    }
    for (const name of ["one", "two"]) {
      await until(
        `process ${name}'s bridge to get its event`,
        () => received(`${base}/${name}`).some((m) => JSON.stringify(m).includes(`ses_${name}`)),
        `${base}/${name}/bridge.log`,
      );
    }
    const locks = [...Deno.readDirSync(`${STATE}/plugin-locks`)].map((e) => e.name).sort();
    assert.deepEqual(locks, procs.map((p) => `${p.pid}-default.lock`).sort());
    for (const p of procs) await p.stdin.close();
    for (const p of procs) assert.equal((await p.status).code, 0);
    for (const name of ["one", "two"]) {
      assert.equal(read(`${base}/${name}/starts`).trim().split("\n").length, 1);
      assert.ok(
        !JSON.stringify(received(`${base}/${name}`)).includes(
          name === "one" ? "ses_two" : "ses_one",
        ),
      );
    }
  } finally {
    for (const p of procs) {
      try {
        p.kill("SIGKILL");
      } catch { /* exited */ }
      await p.status;
    }
    await Deno.remove(base, { recursive: true });
  }
});

/** A fake in-process OpenCode server: what the plugin's client would call. */
function fakeUpstream() {
  const calls: Request[] = [];
  let stream: ReadableStreamDefaultController<Uint8Array> | null = null;
  let cancelled = false;
  const fetch = (req: Request): Promise<Response> => {
    calls.push(req);
    const url = new URL(req.url);
    if (url.pathname === "/event") {
      return Promise.resolve(
        new Response(
          new ReadableStream<Uint8Array>({
            start(c) {
              stream = c;
              c.enqueue(new TextEncoder().encode('data: {"type":"server.connected"}\n\n'));
            },
            cancel() {
              cancelled = true;
            },
          }),
          { headers: { "content-type": "text/event-stream" } },
        ),
      );
    }
    return req.text().then((body) =>
      Response.json({ path: url.pathname, query: url.search, method: req.method, body })
    );
  };
  return {
    calls,
    client: { _client: { getConfig: () => ({ baseUrl: "http://localhost:4096", fetch }) } },
    push: (text: string) => stream?.enqueue(new TextEncoder().encode(text)),
    get cancelled() {
      return cancelled;
    },
  };
}

Deno.test("MuxbridgePlugin without a listening server forwards a loopback endpoint in-process, behind a per-run secret", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-link-forward-" });
  const upstream = fakeUpstream();
  const restore = setEnv({ OPENCODE_SERVER_PASSWORD: "real-server-password" });
  let hooks;
  try {
    hooks = await MuxbridgePlugin(pluginInput(dir, UNLISTENED, upstream.client), {
      bin: await fakeBridge(dir),
      log: `${dir}/bridge.log`,
    });
  } finally {
    restore();
  }
  try {
    await until("the hello", () => received(dir).length > 0, `${dir}/bridge.log`);
    const hello = received(dir)[0] as {
      serverUrl: string;
      auth: { username: string; password: string };
    };
    const url = hello.serverUrl;
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    assert.equal(hello.auth.username, "opencode");
    assert.ok(hello.auth.password.length >= 32, "a long random secret");
    assert.notEqual(hello.auth.password, "real-server-password");
    assert.deepEqual(read(`${dir}/argv`).trim().split("\n"), [
      "bridge",
      "--url",
      url,
      "--dir",
      dir,
    ]);
    assert.ok(!read(`${dir}/argv`).includes(hello.auth.password), "the secret is never on argv");
    const basic = (user: string, pass: string) => `Basic ${btoa(`${user}:${pass}`)}`;

    // Without the secret, or with a wrong one: 401, and nothing reaches OpenCode. Wrong values
    // of the very length of the right header too: those reach the byte-by-byte comparison.
    const secret = hello.auth.password;
    const oneOff = `${secret.slice(0, -1)}${secret.endsWith("A") ? "B" : "A"}`;
    for (
      const headers of [
        {},
        { authorization: basic("opencode", "wrong") },
        { authorization: basic("x", secret) },
        { authorization: basic("opencode", oneOff) },
        { authorization: basic("opencodf", secret) },
        { authorization: basic("opencode", secret).toLowerCase() },
      ] as Array<Record<string, string>>
    ) {
      if (headers.authorization?.length === basic("opencode", secret).length) {
        assert.notEqual(headers.authorization, basic("opencode", secret));
      }
      const res = await fetch(`${url}session`, { headers });
      assert.equal(res.status, 401, JSON.stringify(headers));
      await res.body?.cancel();
    }
    const post = await fetch(`${url}session?directory=%2Fp`, {
      method: "POST",
      headers: {
        authorization: basic("opencode", hello.auth.password),
        "content-type": "application/json",
      },
      body: '{"title":"t"}',
    });
    await post.body?.cancel();
    assert.equal(upstream.calls.length, 1, "only the authorised request was forwarded");

    // With it: method, path, query and body arrive; our secret does not, OpenCode's password does.
    const res = await fetch(`${url}session?directory=%2Fp`, {
      method: "POST",
      headers: {
        authorization: basic("opencode", hello.auth.password),
        "content-type": "application/json",
      },
      body: '{"title":"t"}',
    });
    assert.deepEqual(await res.json(), {
      path: "/session",
      query: "?directory=%2Fp",
      method: "POST",
      body: '{"title":"t"}',
    });
    const seen = upstream.calls.at(-1)!;
    assert.equal(seen.headers.get("authorization"), basic("opencode", "real-server-password"));

    // A stream streams: the first event arrives while OpenCode keeps the stream open.
    const events = await fetch(`${url}event`, {
      headers: { authorization: basic("opencode", hello.auth.password) },
    });
    assert.equal(events.headers.get("content-type"), "text/event-stream");
    const reader = events.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    assert.match(first, /server\.connected/);
    upstream.push('data: {"type":"session.idle"}\n\n');
    const second = new TextDecoder().decode((await reader.read()).value);
    assert.match(second, /session\.idle/);
    await reader.cancel();
    await until("the upstream stream cancelled", () => upstream.cancelled);

    // OpenCode going away ends a stream a pane still reads (its attach then ends too).
    const open = await fetch(`${url}event`, {
      headers: { authorization: basic("opencode", hello.auth.password) },
    });
    const streaming = open.body!.getReader();
    await streaming.read(); // connected
    await hooks.dispose!();
    const ended = await streaming.read().then((r) => r.done, () => true);
    assert.ok(ended, "the open stream ends with the plugin");
    await assert.rejects(fetch(url), "the endpoint is gone after dispose");
    assert.match(
      read(`${dir}/bridge.log`),
      /OpenCode listens on no port: forwarding http:\/\/127\.0\.0\.1:\d+\/ to it in-process/,
    );
  } finally {
    await hooks?.dispose?.();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MuxbridgePlugin's endpoint, when OpenCode has no password, forwards no authorization header at all (never the client's, which carries the endpoint's secret)", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-link-forward-nopw-" });
  const upstream = fakeUpstream();
  const restore = setEnv({
    OPENCODE_SERVER_PASSWORD: undefined,
    OPENCODE_SERVER_USERNAME: undefined,
  });
  let hooks;
  try {
    hooks = await MuxbridgePlugin(pluginInput(dir, UNLISTENED, upstream.client), {
      bin: await fakeBridge(dir),
      log: `${dir}/bridge.log`,
    });
  } finally {
    restore();
  }
  try {
    await until("the hello", () => received(dir).length > 0, `${dir}/bridge.log`);
    const hello = received(dir)[0] as { serverUrl: string; auth: { password: string } };
    const res = await fetch(`${hello.serverUrl}session`, {
      headers: { authorization: `Basic ${btoa(`opencode:${hello.auth.password}`)}`, "x-kept": "1" },
    });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    assert.equal(upstream.calls.length, 1);
    const seen = upstream.calls[0];
    assert.equal(seen.headers.get("x-kept"), "1", "other headers are forwarded");
    assert.equal(seen.headers.get("authorization"), null, "the secret stays at the endpoint");
  } finally {
    await hooks?.dispose?.();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MuxbridgePlugin with a real server URL starts no endpoint", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-link-direct-" });
  const upstream = fakeUpstream();
  try {
    const hooks = await MuxbridgePlugin(
      pluginInput(dir, "http://127.0.0.1:4096/", upstream.client),
      {
        bin: await fakeBridge(dir),
        log: `${dir}/bridge.log`,
      },
    );
    await until("the hello", () => received(dir).length > 0, `${dir}/bridge.log`);
    await hooks.dispose!();
    assert.deepEqual(received(dir)[0], {
      type: "bridge.hello",
      serverUrl: "http://127.0.0.1:4096/",
      directory: dir,
    });
    assert.doesNotMatch(read(`${dir}/bridge.log`), /forwarding/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MuxbridgePlugin runs the command `muxbridge install` recorded beside it, and says once when versions differ", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-link-sidecar-" });
  try {
    const bin = await fakeBridge(
      dir,
      RECORDER.replace('"version":"0.1.0"', '"version":"9.9.9"'),
    );
    await Deno.mkdir(`${dir}/plugin`);
    // The file `muxbridge install` writes: it reads the sidecar beside itself.
    await Deno.writeTextFile(`${dir}/plugin/muxbridge.js`, PLUGIN_V1);
    await Deno.writeTextFile(
      `${dir}/plugin/muxbridge.json`,
      JSON.stringify({ command: ["/bin/sh", bin], version: "9.9.9" }),
    );
    const { default: { server: Installed } } = await import(`${dir}/plugin/muxbridge.js`);
    const hooks = await Installed(pluginInput(dir), {
      log: `${dir}/bridge.log`,
      instance: "sidecar",
    });
    await until("the bridge's ready", () => read(`${dir}/bridge.log`).includes('"ready"'));
    await hooks.dispose();
    const log = read(`${dir}/bridge.log`);
    assert.match(log, new RegExp(`starting "/bin/sh ${bin}" \\(from muxbridge\\.json\\)`));
    assert.equal(
      log.match(/version mismatch: this plugin is muxbridge 0\.1\.0, the bridge is 9\.9\.9/g)
        ?.length,
      1,
    );
    assert.equal(log.match(/muxbridge\.json was written by 9\.9\.9/g)?.length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

const BUN = new URL("../node_modules/.bin/bun", import.meta.url).pathname;
const hasBun = (() => {
  try {
    return Deno.statSync(BUN).isFile;
  } catch {
    return false;
  }
})();

/** A bridge that writes 400 `pane.closed` lines and `bye` as fast as it can. */
const CHATTY = `cat > /dev/null &
i=0; while [ $i -lt 400 ]; do echo "{\\"type\\":\\"pane.closed\\",\\"n\\":$i}"; i=$((i+1)); done
echo '{"type":"bye","closed":400}'
wait`;

/** The protocol lines the plugin logged from its bridge, in file order. */
function bridgeSaid(log: string): Array<number | string> {
  return read(log).split("\n").flatMap((l) => {
    const i = l.indexOf("] bridge: {");
    if (i < 0) return [];
    const m = JSON.parse(l.slice(i + "] bridge: ".length));
    return [m.n ?? m.type];
  });
}

const IN_ORDER = [...Array.from({ length: 400 }, (_, i) => i), "bye"];

Deno.test("MuxbridgePlugin writes its log lines in order (pane.closed before bye) under Deno", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-link-order-" });
  try {
    const bin = await fakeBridge(dir, CHATTY);
    const hooks = await MuxbridgePlugin(pluginInput(dir), {
      bin,
      log: `${dir}/bridge.log`,
      maxRestarts: 0,
    });
    await until("bye in the log", () => read(`${dir}/bridge.log`).includes('"bye"'));
    await hooks.dispose!();
    assert.deepEqual(bridgeSaid(`${dir}/bridge.log`), IN_ORDER);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// OpenCode runs plugins in Bun, where concurrent fs.write calls landed out of order (issue 11:
// `bye` before the `pane.closed` that preceded it); this case fails with unserialised writes.
Deno.test({
  name: "MuxbridgePlugin writes its log lines in order (pane.closed before bye) under Bun",
  ...requires("the plugin's log order under Bun", [
    requirement("bun", hasBun, "npm install (bun is a devDependency)"),
  ]),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "muxbridge-link-order-bun-" });
    try {
      const bin = await fakeBridge(dir, CHATTY);
      const log = `${dir}/bridge.log`;
      const host = `
        import { readFileSync } from "node:fs";
        const { default: { server: MuxbridgePlugin } } = await import(${
        JSON.stringify(`${dir}/muxbridge.js`)
      });
        const hooks = await MuxbridgePlugin(
          { serverUrl: new URL("http://127.0.0.1:4096/"), directory: ${JSON.stringify(dir)} },
          { bin: ${JSON.stringify(bin)}, log: ${JSON.stringify(log)}, maxRestarts: 0 },
        );
        for (let i = 0; i < 2000; i++) {
          try { if (readFileSync(${
        JSON.stringify(log)
      }, "utf8").includes('"bye"')) break; } catch {}
          await new Promise((r) => setTimeout(r, 10));
        }
        await hooks.dispose();
      `;
      await Deno.writeTextFile(`${dir}/host.ts`, host);
      // The bundle OpenCode's Bun loads, not the sources.
      await Deno.writeTextFile(`${dir}/muxbridge.js`, PLUGIN_V1);
      const out = await new Deno.Command(BUN, {
        args: [`${dir}/host.ts`],
        env: { MUXBRIDGE_STATE_DIR: STATE, MUXBRIDGE_BIN: "" },
        stdin: "null",
        stdout: "piped",
        stderr: "piped",
      }).output();
      assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
      assert.deepEqual(bridgeSaid(log), IN_ORDER);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
