/**
 * A minimal, private real-OpenCode fixture for the session-loop end-to-end test only: a real
 * `opencode serve` on loopback with an isolated HOME/XDG, a tiny OpenAI-compatible mock model
 * served from the test process, and the server's `/event` stream. It is deliberately small and
 * named apart from the shared real-server harness (`tests/helpers/opencode_server.ts`, owned by
 * the plugin work); once both exist the loop test can move onto the shared one.
 *
 * Facts it relies on are from research `opencode-peer.md`: §2 (isolation, the plugin-install
 * stub), §3 (wait for the "listening on" line; `--port 0` may pick 4096), §4 (routes), §6 (the
 * mock's chunk shapes).
 *
 * @module
 */

import { existsSync } from "node:fs";

/** Where the `opencode` binary is: `OPENCODE_TEST_BIN`, else this repository's node_modules. */
export function findOpencodeBin(): string | null {
  const named = Deno.env.get("OPENCODE_TEST_BIN");
  if (named) return existsSync(named) ? named : null;
  const root = new URL("../../", import.meta.url).pathname;
  for (const p of ["node_modules/.bin/opencode", "node_modules/opencode-linux-x64/bin/opencode"]) {
    if (existsSync(`${root}${p}`)) return `${root}${p}`;
  }
  return null;
}

/** A running server. */
export interface LoopOpencode {
  /** `http://127.0.0.1:<port>`. */
  url: string;
  /** The project directory the server runs in. */
  dir: string;
  /** The server's version. */
  version: string;
  /** Creates a session (a child when `parentID` is given); returns its id. */
  create(title: string, parentID?: string): Promise<string>;
  /** Starts a turn (`prompt_async`). */
  prompt(id: string, text: string): Promise<void>;
  /** Deletes a session. */
  remove(id: string): Promise<void>;
  /** Calls `fn` with every `session.*` event from `/event`, as the plugin hook receives it. */
  onEvent(fn: (event: Record<string, unknown>) => void): void;
  /** Stops everything it started and removes its files. */
  close(): Promise<void>;
}

/** Starts the mock model and `opencode serve`; throws if the server does not come up in 90 s. */
export async function startLoopOpencode(bin: string): Promise<LoopOpencode> {
  const base = await Deno.makeTempDir({ prefix: "muxbridge-oc-" });
  const mock = serveMockModel();
  let child: Deno.ChildProcess | null = null;
  const abort = new AbortController();
  const listeners: Array<(e: Record<string, unknown>) => void> = [];
  let events: Promise<void> = Promise.resolve();
  const close = async () => {
    abort.abort();
    await events.catch(() => {});
    if (child) {
      try {
        child.kill("SIGTERM");
      } catch { /* gone */ }
      const timer = setTimeout(() => {
        try {
          child?.kill("SIGKILL");
        } catch { /* gone */ }
      }, 5000);
      await child.status;
      clearTimeout(timer);
    }
    await mock.close();
    await Deno.remove(base, { recursive: true }).catch(() => {});
  };
  try {
    const dir = `${base}/proj`;
    const cfg = `${base}/config/opencode`;
    for (const d of ["home", "data", "cache", "state", "proj", "config/opencode/node_modules"]) {
      await Deno.mkdir(`${base}/${d}`, { recursive: true });
    }
    // Skips the background `npm install @opencode-ai/plugin` (research §2).
    await Deno.writeTextFile(
      `${cfg}/package.json`,
      JSON.stringify({ dependencies: { "@opencode-ai/plugin": "1.18.33" } }),
    );
    await Deno.writeTextFile(
      `${cfg}/package-lock.json`,
      JSON.stringify({ packages: { "": { dependencies: { "@opencode-ai/plugin": "1.18.33" } } } }),
    );
    await Deno.writeTextFile(
      `${cfg}/opencode.json`,
      JSON.stringify({
        autoupdate: false,
        share: "disabled",
        snapshot: false,
        lsp: false,
        formatter: false,
        model: "mock/mock-model",
        small_model: "mock/mock-model",
        enabled_providers: ["mock"],
        provider: {
          mock: {
            npm: "@ai-sdk/openai-compatible",
            name: "Mock (loopback)",
            options: { baseURL: `http://127.0.0.1:${mock.port}/v1`, apiKey: "mock-key" },
            models: {
              "mock-model": {
                name: "Mock Model",
                tool_call: false,
                limit: { context: 32000, output: 4096 },
              },
            },
          },
        },
      }),
    );
    const git = (args: string[]) =>
      new Deno.Command("git", { args, cwd: dir, stdout: "null", stderr: "null" }).output();
    await git(["init", "-q", "."]);
    await git([
      "-c",
      "user.email=t@t",
      "-c",
      "user.name=t",
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      "i",
    ]);
    child = new Deno.Command(bin, {
      args: ["serve", "--port", "0", "--hostname", "127.0.0.1"],
      cwd: dir,
      clearEnv: true,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: `${base}/home`,
        XDG_CONFIG_HOME: `${base}/config`,
        XDG_DATA_HOME: `${base}/data`,
        XDG_CACHE_HOME: `${base}/cache`,
        XDG_STATE_HOME: `${base}/state`,
        OPENCODE_DISABLE_AUTOUPDATE: "1",
        OPENCODE_DISABLE_SHARE: "1",
        OPENCODE_DISABLE_MODELS_FETCH: "1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
        OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
        OPENCODE_DISABLE_CLAUDE_CODE: "1",
        npm_config_registry: "http://127.0.0.1:9/",
      },
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const url = await listeningUrl(child.stdout, 90_000);
    const health = await (await fetch(`${url}/global/health`)).json();
    const call = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${url}${path}`, {
        method,
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(60_000),
      });
      const text = await r.text();
      if (!r.ok) throw new Error(`${method} ${path} answered ${r.status}: ${text.slice(0, 200)}`);
      return text ? JSON.parse(text) : null;
    };
    events = (async () => {
      const r = await fetch(`${url}/event`, { signal: abort.signal });
      let buf = "";
      for await (const chunk of r.body!.pipeThrough(new TextDecoderStream())) {
        buf += chunk;
        let nl;
        while ((nl = buf.indexOf("\n\n")) >= 0) {
          const frame = buf.slice(0, nl);
          buf = buf.slice(nl + 2);
          if (!frame.startsWith("data: ")) continue;
          const event = JSON.parse(frame.slice(6));
          if (String(event.type).startsWith("session.")) { for (const fn of listeners) fn(event); }
        }
      }
    })();
    return {
      url,
      dir,
      version: String(health.version),
      async create(title, parentID) {
        return (await call("POST", "/session", { title, ...(parentID ? { parentID } : {}) })).id;
      },
      async prompt(id, text) {
        await call("POST", `/session/${id}/prompt_async`, { parts: [{ type: "text", text }] });
      },
      async remove(id) {
        await call("DELETE", `/session/${id}`);
      },
      onEvent(fn) {
        listeners.push(fn);
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}

async function listeningUrl(stdout: ReadableStream<Uint8Array>, ms: number): Promise<string> {
  const reader = stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
    const m = /opencode server listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
    if (m) {
      // Keep draining so the server never blocks on a full pipe.
      (async () => {
        while (!(await reader.read()).done) { /* drain */ }
      })().catch(() => {});
      return m[1];
    }
  }
  throw new Error(`opencode serve did not say it listens: ${text.slice(-500)}`);
}

/** An OpenAI-compatible chat endpoint that streams a short answer, one word every 150 ms. */
function serveMockModel(): { port: number; close(): Promise<void> } {
  const words = ["Hello", "from", "the", "mock", "model."];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    if (req.method !== "POST" || !new URL(req.url).pathname.endsWith("/chat/completions")) {
      return new Response("{}", { status: 404 });
    }
    const body = await req.json().catch(() => ({}));
    const base = { id: "chatcmpl-mock", created: Math.floor(Date.now() / 1000), model: body.model };
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    if (!body.stream) {
      return Response.json({
        ...base,
        object: "chat.completion",
        choices: [{
          index: 0,
          message: { role: "assistant", content: words.join(" ") },
          finish_reason: "stop",
        }],
        usage,
      });
    }
    const enc = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        const send = (o: unknown) =>
          controller.enqueue(
            enc.encode(
              `data: ${
                JSON.stringify({ ...base, object: "chat.completion.chunk", ...o as object })
              }\n\n`,
            ),
          );
        send({ choices: [{ index: 0, delta: { role: "assistant", content: "" } }] });
        for (const w of words) {
          await new Promise((r) => setTimeout(r, 150));
          send({ choices: [{ index: 0, delta: { content: `${w} ` } }] });
        }
        send({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
        send({ choices: [], usage });
        controller.enqueue(enc.encode("data: [DONE]\n\n"));
        controller.close();
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  });
  return { port: server.addr.port, close: () => server.shutdown() };
}
