#!/usr/bin/env -S deno run --quiet --no-config --no-lock --allow-run=tmux --allow-env --allow-read --allow-write
/**
 * An example muxbridge pane provider over tmux (docs/provider-protocol.md). muxbridge starts it
 * once and sends one JSON-RPC 2.0 request per line on its stdin; it answers one line each on
 * stdout, in order. Diagnostics go to stderr. It exits at the end of its input.
 *
 *   provider.ts [-L SOCKET_NAME | -S SOCKET_PATH] [--target PANE]
 *
 * Config: `{ "backend": "provider", "provider": { "command": ["/path/to/provider.ts", "-L", "work"] } }`.
 * Inside tmux it needs no arguments: it uses the tmux it runs in and `$TMUX_PANE` as the anchor.
 *
 * How each rule of the protocol is kept:
 * - argv, never a shell string: the pane runs `/bin/sh <launch file>`; the launch file (0600, in
 *   a private 0700 directory, removed by the pane before anything else) changes directory, exports
 *   the environment and `exec`s the argv, every value single-quoted. No value reaches tmux's
 *   command parser, which would split an argument ending in `;` and expand `#{…}` in `-c`.
 * - credentials only in the environment: they are in the launch file, never on any argv.
 * - the spawn token rides in the pane's start command (`muxbridge-spawn=<token>`), which
 *   `#{pane_start_command}` shows for the pane's life.
 * - titles are literal: `select-pane -T` expands formats, so every run of `#` is doubled.
 * - the instance is the server's socket path, pid and start time: a restarted server starts its
 *   pane ids again, and muxbridge acts on a pane it recorded only while the instance is the same.
 *
 * @module
 */

type Params = Record<string, unknown>;

class ProviderError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}
const PANE_NOT_FOUND = -32001, NO_SPACE = -32002, UNAVAILABLE = -32004, INVALID_PARAMS = -32602;

// ---------------------------------------------------------------- arguments

const server: string[] = [];
let target: string | null = Deno.env.get("TMUX_PANE") || null;
for (let i = 0; i < Deno.args.length; i++) {
  const a = Deno.args[i];
  if ((a === "-L" || a === "-S") && Deno.args[i + 1]) server.push(a, Deno.args[++i]);
  else if (a === "--target" && Deno.args[i + 1]) target = Deno.args[++i];
  else {
    console.error(
      `usage: provider.ts [-L NAME | -S PATH] [--target PANE] (got ${JSON.stringify(a)})`,
    );
    Deno.exit(2);
  }
}

// ---------------------------------------------------------------- tmux

async function tmux(args: string[]): Promise<string> {
  const out = await new Deno.Command("tmux", {
    args: [...server, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(10_000),
  }).output();
  const stderr = new TextDecoder().decode(out.stderr).trim();
  if (out.success) return new TextDecoder().decode(out.stdout);
  if (/can't find (pane|window|session)/.test(stderr)) {
    throw new ProviderError(PANE_NOT_FOUND, stderr);
  }
  if (/no space for new pane|pane too small/.test(stderr)) {
    throw new ProviderError(NO_SPACE, stderr);
  }
  if (/no server running|error connecting/.test(stderr)) {
    throw new ProviderError(UNAVAILABLE, stderr);
  }
  throw new Error(`tmux ${args[0]} exited ${out.code}: ${stderr}`);
}

/** A literal title for `select-pane -T`, which expands formats: each run of `#` doubled. */
const literalTitle = (title: string) => title.replace(/#+/g, (run) => run + run);

/** A pane id as tmux prints them; anything else never reaches tmux's argv. */
function paneId(params: Params): string {
  const id = params.paneId;
  if (typeof id !== "string" || !/^%\d+$/.test(id)) {
    throw new ProviderError(PANE_NOT_FOUND, `no pane ${JSON.stringify(id)}`);
  }
  return id;
}

// ---------------------------------------------------------------- launch files

const launchDir = await Deno.makeTempDir({ prefix: "muxbridge-tmux-provider-" }); // mode 0700
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** Writes the script a new pane runs: remove itself, cd, export, exec. */
async function launchFile(argv: string[], cwd: string, env: Record<string, string>) {
  for (const name of Object.keys(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new ProviderError(INVALID_PARAMS, `bad variable name ${JSON.stringify(name)}`);
    }
  }
  const path = `${launchDir}/launch-${crypto.randomUUID()}`;
  const script = [
    `rm -f -- "$0"`,
    `cd -- ${quote(cwd)} || exit 1`,
    ...Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}`),
    `exec ${argv.map(quote).join(" ")}`,
  ].join("\n");
  await Deno.writeTextFile(path, `${script}\n`, { mode: 0o600, createNew: true });
  return path;
}

/**
 * Where a new pane goes: the first splits the anchor side by side; later ones split the largest
 * pane muxbridge opened in the anchor's window (it carries a spawn token), one above the other.
 */
async function splitTarget(anchor: string): Promise<string[]> {
  const out = await tmux([
    "list-panes",
    "-t",
    anchor,
    "-F",
    "#{pane_id}\t#{pane_width}\t#{pane_height}\t#{pane_start_command}",
  ]);
  let best: { id: string; area: number } | undefined;
  for (const line of out.trim().split("\n")) {
    const [id, w, h, start] = line.split("\t");
    const area = Number(w) * Number(h);
    if (/muxbridge-spawn=/.test(start ?? "") && area > (best?.area ?? 0)) best = { id, area };
  }
  return best ? ["-v", "-t", best.id] : ["-h", "-t", anchor];
}

/** What `display-message -p` prints for the server: its socket path, pid and start time. */
const SERVER_FORMAT = "#{socket_path} #{pid} #{start_time}";

/**
 * The server, as text that changes when it restarts: a restarted server hands out the same pane
 * ids again, and muxbridge acts on a pane it recorded only while this stays the same.
 */
function serverText(line: string): string | undefined {
  const text = line.trim();
  return /^\/\S* \d+ \d+$/.test(text) ? `tmux ${text}` : undefined;
}

// ---------------------------------------------------------------- methods

const methods: Record<string, (p: Params) => Promise<unknown>> = {
  async initialize() {
    const server = serverText(
      await tmux(["display-message", "-p", SERVER_FORMAT]).catch(() => ""),
    );
    return {
      protocolVersion: "1",
      provider: { name: "tmux-example", version: "0.1.0" },
      capabilities: { layout: true, title: true, focusSafe: true, env: true, spawnToken: true },
      selfPaneId: target,
      ...(server ? { instance: server } : {}),
    };
  },

  async spawn(p) {
    const { argv, cwd, env, title, token } = p as {
      argv: string[];
      cwd: string;
      env: Record<string, string>;
      title: string;
      token?: string;
    };
    const anchor = typeof p.anchor === "string" ? p.anchor : target;
    const where = anchor ? await splitTarget(anchor) : [];
    const file = await launchFile(argv, cwd, env);
    const marker = token && /^[0-9a-f]{32}$/.test(token) ? [`muxbridge-spawn=${token}`] : [];
    let out: string;
    try {
      out = await tmux([
        "split-window",
        "-d", // keep the user's focus
        ...where,
        "-P",
        "-F",
        "#{pane_id} #{pane_pid}",
        "--",
        "/bin/sh",
        file,
        ...marker,
      ]);
    } catch (err) {
      await Deno.remove(file).catch(() => {});
      throw err;
    }
    const [id, pid] = out.trim().split(" ");
    if (title) await tmux(["select-pane", "-t", id, "-T", literalTitle(title)]);
    return { paneId: id, pid: Number(pid) };
  },

  async list() {
    // The server's identity comes last, from the same client (the server can be restarted
    // while this provider runs: each list says which one answered).
    const out = await tmux([
      "list-panes",
      "-a",
      "-F",
      "#{pane_id}\t#{pane_dead}\t#{pane_pid}\t#{pane_start_command}\t#{pane_title}",
      ";",
      "display-message",
      "-p",
      SERVER_FORMAT,
    ]);
    const lines = out.trimEnd().split("\n");
    const server = serverText(lines.pop() ?? "");
    const panes = [];
    for (const line of lines) {
      // The start command never holds a tab (tmux escapes it); the title comes last.
      const [id, dead, pid, start, ...title] = line.split("\t");
      if (!/^%\d+$/.test(id ?? "")) continue;
      const token = /muxbridge-spawn=([0-9a-f]{32})/.exec(start ?? "")?.[1];
      panes.push({
        paneId: id,
        alive: dead !== "1",
        ...(Number(pid) > 0 ? { pid: Number(pid) } : {}),
        title: title.join("\t"),
        ...(token ? { token } : {}),
      });
    }
    return { panes, ...(server ? { instance: server } : {}) };
  },

  async interrupt(p) {
    await tmux(["send-keys", "-t", paneId(p), "C-c"]);
    return {};
  },

  async close(p) {
    await tmux(["kill-pane", "-t", paneId(p)]);
    return {};
  },

  async setTitle(p) {
    await tmux(["select-pane", "-t", paneId(p), "-T", literalTitle(String(p.title ?? ""))]);
    return {};
  },

  async layout(p) {
    const ours = new Set(p.panes as string[]);
    if (!target) {
      return { applied: false, detail: "no anchor pane (run inside tmux or pass --target)" };
    }
    const inWindow = (await tmux(["list-panes", "-t", target, "-F", "#{pane_id}"])).trim().split(
      "\n",
    );
    const foreign = inWindow.filter((id) => id !== target && !ours.has(id));
    if (foreign.length > 0) {
      return { applied: false, detail: `the window holds other panes (${foreign.join(" ")})` };
    }
    const size = `${p.mainPaneSize}%`;
    await tmux(["set-window-option", "-t", target, "main-pane-width", size]);
    await tmux(["set-window-option", "-t", target, "main-pane-height", size]);
    await tmux(["select-layout", "-t", target, String(p.layout)]);
    return { applied: true, detail: `${p.layout} on the window of ${target}` };
  },
};

// ---------------------------------------------------------------- JSON-RPC over stdio

const encoder = new TextEncoder();
const reply = (message: Record<string, unknown>) =>
  Deno.stdout.writeSync(encoder.encode(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`));

async function handle(line: string) {
  let request: { id?: unknown; method?: unknown; params?: unknown };
  try {
    request = JSON.parse(line);
  } catch {
    return reply({ id: null, error: { code: -32700, message: "parse error" } });
  }
  const { id, method } = request;
  const fn = typeof method === "string" && Object.hasOwn(methods, method) ? methods[method] : null;
  if (!fn) return reply({ id, error: { code: -32601, message: `no method ${String(method)}` } });
  try {
    reply({ id, result: await fn((request.params ?? {}) as Params) });
  } catch (err) {
    const code = err instanceof ProviderError ? err.code : -32603;
    reply({ id, error: { code, message: err instanceof Error ? err.message : String(err) } });
  }
}

const decoder = new TextDecoder();
let buffered = "";
for await (const chunk of Deno.stdin.readable) {
  buffered += decoder.decode(chunk, { stream: true });
  let nl;
  while ((nl = buffered.indexOf("\n")) >= 0) {
    const line = buffered.slice(0, nl);
    buffered = buffered.slice(nl + 1);
    if (line.trim() !== "") await handle(line);
  }
}
await Deno.remove(launchDir, { recursive: true }).catch(() => {});
