#!/usr/bin/env -S deno run --quiet --no-config --no-lock --allow-run=screen --allow-env --allow-read --allow-write --allow-sys=uid
/**
 * An example muxbridge pane provider over GNU screen (docs/provider-protocol.md): one screen
 * window per child session. muxbridge starts it once and sends one JSON-RPC 2.0 request per
 * line on its stdin; it answers one line each on stdout, in order, and exits at the end of its
 * input. Diagnostics go to stderr.
 *
 *   provider.ts [--session NAME] [--state-dir DIR]
 *
 * Inside screen it uses the session it runs in (`$STY`). Config:
 * `{ "backend": "provider", "provider": { "command": ["/path/to/provider.ts", "--session", "work"] } }`.
 *
 * GNU screen re-reads every `-X` argument with its own command parser: `$NAME` expands from the
 * screen server's environment, `^X` becomes a control byte, a `|` in `screen -t` splits the
 * title. So no value of muxbridge's ever travels as a `-X` argument except the title, escaped
 * (`\`, `$`, `^`): the program's argv, directory and environment go into a launch script (0600,
 * in a private 0700 state directory, removed by the window before anything else) that records
 * its pid, changes directory, exports the environment and `exec`s the argv, every value
 * single-quoted. The window runs `/bin/sh <script> muxbridge-spawn=<token>`, characters screen
 * leaves alone, and `%x` in `-Q windows` shows that command line for the window's life: it
 * carries the spawn token and the script's name, which makes a window's id unique
 * (`<number>.<launch id>`: screen hands a closed window's number to the next one).
 *
 * The instance it reports is the screen server's `<pid>.<name>` with its socket's inode (as
 * `screen -ls` shows where it is): a restarted server numbers its windows from 0 again.
 *
 * Two more quirks: `-X kill` and `-X stuff` exit 0 for a window that does not exist, so each
 * pane is looked up by listing first; and `-Q windows` without a format cuts titles to 20
 * characters and the answer to 1024 bytes, so a format is always given (fields separated by
 * the control bytes `^A`/`^B`, which screen's parser makes of those carets).
 *
 * @module
 */

type Params = Record<string, unknown>;

class ProviderError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}
const PANE_NOT_FOUND = -32001, UNAVAILABLE = -32004, INVALID_PARAMS = -32602;

// ---------------------------------------------------------------- arguments and state

let session = Deno.env.get("STY") || "";
let stateDir = "";
for (let i = 0; i < Deno.args.length; i++) {
  const a = Deno.args[i];
  if (a === "--session" && Deno.args[i + 1]) session = Deno.args[++i];
  else if (a === "--state-dir" && Deno.args[i + 1]) stateDir = Deno.args[++i];
  else {
    console.error(
      `usage: provider.ts [--session NAME] [--state-dir DIR] (got ${JSON.stringify(a)})`,
    );
    Deno.exit(2);
  }
}
if (!/^[A-Za-z0-9._-]+$/.test(session)) {
  console.error("provider.ts: name the screen session with --session (letters, digits, . _ -)");
  Deno.exit(2);
}
const uid = Deno.uid() ?? 0;
stateDir ||= `${Deno.env.get("XDG_RUNTIME_DIR") || "/tmp"}/muxbridge-screen-${uid}/${session}`;
// The script's path reaches screen's parser: only characters it leaves alone.
if (!/^\/[A-Za-z0-9/._-]+$/.test(stateDir)) {
  console.error(
    `provider.ts: the state directory ${
      JSON.stringify(stateDir)
    } has characters screen would rewrite`,
  );
  Deno.exit(2);
}
await Deno.mkdir(stateDir, { recursive: true, mode: 0o700 });
const st = await Deno.lstat(stateDir);
if (!st.isDirectory || st.uid !== uid || ((st.mode ?? 0) & 0o077) !== 0) {
  console.error(`provider.ts: ${stateDir} must be a directory of this user with mode 0700`);
  Deno.exit(2);
}

// ---------------------------------------------------------------- screen

async function screen(args: string[]): Promise<string> {
  const out = await new Deno.Command("screen", {
    args: ["-S", session, ...args],
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(10_000),
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  if (out.success) return text;
  // Errors come on stdout: "No screen session found.", "Could not find pre-select window."
  const why = `${text}${new TextDecoder().decode(out.stderr)}`.trim();
  if (/No screen session found/.test(why)) throw new ProviderError(UNAVAILABLE, why);
  if (/Could not find pre-select window/.test(why)) throw new ProviderError(PANE_NOT_FOUND, why);
  throw new Error(`screen ${args.join(" ")} exited ${out.code}: ${why}`);
}

/** A title as `-X title` must be given it to arrive literally. */
const literal = (text: string) => text.replace(/[\\$^]/g, (c) => `\\${c}`);

interface Window {
  paneId: string;
  number: string;
  title: string;
  launch?: string;
  token?: string;
}

async function windows(): Promise<Window[]> {
  const out = await screen(["-Q", "windows", "%n^A%t^A%x^B"]);
  const found: Window[] = [];
  for (const record of out.split("\x02")) {
    const [number, title = "", command = ""] = record.split("\x01");
    if (!/^\d+$/.test(number ?? "")) continue;
    const launch = command.startsWith(`/bin/sh ${stateDir}/`)
      ? /\/([0-9a-f]{12})\.sh(?: |$)/.exec(command)?.[1]
      : undefined;
    const token = launch ? /muxbridge-spawn=([0-9a-f]{32})/.exec(command)?.[1] : undefined;
    found.push({
      paneId: launch ? `${number}.${launch}` : number,
      number,
      title,
      ...(launch ? { launch } : {}),
      ...(token ? { token } : {}),
    });
  }
  return found;
}

async function pidOf(launch: string): Promise<number | undefined> {
  try {
    const pid = Number((await Deno.readTextFile(`${stateDir}/${launch}.pid`)).trim());
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** The window a pane id names, or paneNotFound: never a window that reused its number. */
async function windowOf(params: Params): Promise<Window> {
  const window = (await windows()).find((w) => w.paneId === params.paneId);
  if (!window) {
    throw new ProviderError(PANE_NOT_FOUND, `no window ${JSON.stringify(params.paneId)}`);
  }
  return window;
}

/** Waits (bounded) for something the new window does: its listing, its pid file. */
async function soon<T>(check: () => Promise<T | undefined>): Promise<T | undefined> {
  for (let delay = 5; delay < 2000; delay *= 2) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, delay));
  }
  return await check();
}

/**
 * The screen server of the session, as text that changes when it restarts: `screen -ls` shows
 * the session as `<pid>.<name>` and the directory of its socket, which each server creates anew
 * (its inode tells it from a later one; the time `-ls` shows moves as the socket is touched). A
 * new server numbers its windows from 0 again; muxbridge acts on a window it recorded only while
 * this stays the same.
 */
async function instance(): Promise<string | undefined> {
  const out = await new Deno.Command("screen", {
    args: ["-ls"],
    stdin: "null",
    stdout: "piped",
    stderr: "null",
    signal: AbortSignal.timeout(10_000),
  }).output().catch(() => undefined);
  const text = out ? new TextDecoder().decode(out.stdout) : "";
  const dir = /Sockets? in (\/.*)\.\r?$/m.exec(text)?.[1];
  for (const line of text.split("\n")) {
    const m = /^\s+(\d+)\.(\S+)\s/.exec(line);
    if (!dir || !m || (session !== m[2] && session !== `${m[1]}.${m[2]}`)) continue;
    const socket = await Deno.lstat(`${dir}/${m[1]}.${m[2]}`).catch(() => undefined);
    return socket?.ino ? `screen ${m[1]}.${m[2]} socket ${socket.ino}` : undefined;
  }
  return undefined;
}

// ---------------------------------------------------------------- launch scripts

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

async function launchScript(argv: string[], cwd: string, env: Record<string, string>) {
  for (const name of Object.keys(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new ProviderError(INVALID_PARAMS, `bad variable name ${JSON.stringify(name)}`);
    }
  }
  const launch = Array.from(
    crypto.getRandomValues(new Uint8Array(6)),
    (b) => b.toString(16).padStart(2, "0"),
  ).join("");
  const script = [
    `rm -f -- "$0"`,
    `echo $$ > ${quote(`${stateDir}/${launch}.pid`)}`,
    `cd -- ${quote(cwd)} || exit 1`,
    ...Object.entries(env).map(([k, v]) => `export ${k}=${quote(v)}`),
    `exec ${argv.map(quote).join(" ")}`,
  ].join("\n");
  await Deno.writeTextFile(`${stateDir}/${launch}.sh`, `${script}\n`, {
    mode: 0o600,
    createNew: true,
  });
  return launch;
}

// ---------------------------------------------------------------- methods

const methods: Record<string, (p: Params) => Promise<unknown>> = {
  async initialize() {
    const server = await instance();
    return {
      protocolVersion: "1",
      provider: { name: "screen-example", version: "0.1.0" },
      // A new window becomes the session's current one: not focus-safe. No splits: no layout.
      capabilities: { layout: false, title: true, focusSafe: false, env: true, spawnToken: true },
      selfPaneId: null,
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
    const launch = await launchScript(argv, cwd, env);
    const marker = token && /^[0-9a-f]{32}$/.test(token) ? [`muxbridge-spawn=${token}`] : [];
    try {
      await screen(["-X", "screen", "/bin/sh", `${stateDir}/${launch}.sh`, ...marker]);
    } catch (err) {
      await Deno.remove(`${stateDir}/${launch}.sh`).catch(() => {});
      throw err;
    }
    // `-X screen` prints nothing and exits 0 even when the program cannot start: find the window.
    const window = await soon(async () => (await windows()).find((w) => w.launch === launch));
    if (!window) throw new Error("the new window closed at once (did its program start?)");
    if (title) await screen(["-p", window.number, "-X", "title", literal(title)]);
    const pid = await soon(() => pidOf(launch));
    return { paneId: window.paneId, ...(pid ? { pid } : {}) };
  },

  async list() {
    const all = await windows();
    const panes = [];
    for (const w of all) {
      const pid = w.launch ? await pidOf(w.launch) : undefined;
      panes.push({
        paneId: w.paneId,
        alive: true, // without `zombie`, a window goes when its program ends
        title: w.title,
        ...(pid ? { pid } : {}),
        ...(w.token ? { token: w.token } : {}),
      });
    }
    // Pid files of windows that are gone.
    const live = new Set(all.map((w) => w.launch));
    for await (const e of Deno.readDir(stateDir)) {
      const m = /^([0-9a-f]{12})\.pid$/.exec(e.name);
      if (m && !live.has(m[1])) await Deno.remove(`${stateDir}/${e.name}`).catch(() => {});
    }
    // The session can be restarted while this provider runs: say which server answered.
    const server = await instance();
    return { panes, ...(server ? { instance: server } : {}) };
  },

  async interrupt(p) {
    const w = await windowOf(p);
    await screen(["-p", w.number, "-X", "stuff", "^C"]); // screen makes ^C the byte 0x03
    return {};
  },

  async close(p) {
    const w = await windowOf(p);
    await screen(["-p", w.number, "-X", "kill"]);
    return {};
  },

  async setTitle(p) {
    const w = await windowOf(p);
    await screen(["-p", w.number, "-X", "title", literal(String(p.title ?? ""))]);
    return {};
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
