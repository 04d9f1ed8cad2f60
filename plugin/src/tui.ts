/**
 * OpenCode 2.x: the TUI plugin's logic. It runs inside every TUI process, with that terminal's
 * environment (`TMUX`, `TMUX_PANE`, `KITTY_*`, `ZELLIJ*`, …), which is why muxbridge's bridge is
 * started from here and not from the server plugin (the server runs in the per-user service,
 * far from any terminal).
 *
 * - **Pane mode** (`MUXBRIDGE_PANE_SESSION` set: muxbridge's own panes run a TUI on one child
 *   session): no bridge, nothing sent. It keeps the view on that child (the TUI's Up, Esc and
 *   Ctrl+C take it to the parent; it goes back), and Ctrl+C ends the TUI (its own `app.exit`),
 *   so a pane closes on Ctrl+C as muxbridge's close expects, as a 1.x pane does.
 * - **Normal mode**: exactly one `muxbridge bridge --dir <directory>` per TUI process, restarted
 *   with backoff; `bridge.hello` with the server's first URL, the directory, OpenCode's version
 *   and `scope: "tui"`; every event muxbridge reads, one JSON line each, through the bounded
 *   queue; `bridge.view` whenever the TUI starts showing another session. A TUI whose server
 *   has no URL, or is its own private one (`--standalone`), starts nothing and says so once.
 *
 * Both modes return the cleanup OpenCode runs when it unloads the plugin (hot reload, exit): it
 * ends the bridge. Should the TUI die without it, the bridge's input closes and it ends too.
 *
 * @module
 */

import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import process from "node:process";
import { clearInterval, clearTimeout, setInterval, setTimeout } from "node:timers";
import { BridgeProcess } from "./bridge_process.ts";
import { bridgeOutput, tuiHelloLine, viewLine } from "./bridge_talk.ts";
import { v2EventLine } from "./events.ts";
import { LineQueue } from "./line_queue.ts";
import { LogWriter, openLog } from "./log.ts";
import { type Settings, settingsFrom, SIDECAR } from "./settings.ts";
import { type TuiHost, tuiHost } from "./tui_host.ts";
import { bag, type Guard, guardWith, PLUGIN_VERSION } from "./values.ts";

/** How often the TUI's route is read (also on every event), and readiness checked. */
const TICK_MS = 250;
/** The longest wait for `server.info()`, and for each step of pairing. */
const INFO_TIMEOUT_MS = 10_000;
/** What a session id looks like (muxbridge's own panes name one; anything else is ignored). */
const SESSION_ID = /^[A-Za-z0-9_-]{1,128}$/;
/** The TUI process's one running link (loads of the plugin in one process share nothing else). */
const ACTIVE = Symbol.for("muxbridge.tui.link");

/** What {@linkcode startTui} needs besides the context; tests replace these. */
export interface TuiSeams {
  /** The TUI's environment. @default process.env */
  env?: Record<string, string | undefined>;
  /**
   * Ends this TUI when its own exit command cannot (pane mode's Ctrl+C). @default SIGTERM to
   * this process
   */
  exit?: () => void;
  /** How often the route is read. @default 250 */
  tickMs?: number;
  /** The parent of a process, or null when unknown. @default /proc, else `ps` */
  parentOf?: (pid: number) => number | null;
}

/** The cleanup a TUI plugin's `setup` returns. */
export type Cleanup = () => Promise<void>;

const NOTHING: Cleanup = () => Promise.resolve();

/**
 * Starts the plugin in one TUI: pane mode or normal mode (see the module). Never throws.
 *
 * @param ctx What OpenCode handed the TUI plugin's `setup`.
 * @param here The folder the plugin was loaded from (its `muxbridge.json` is read there).
 * @param seams The environment, the exit and the tick (tests).
 * @returns The cleanup: stops what it started.
 */
export function startTui(ctx: unknown, here: string, seams: TuiSeams = {}): Cleanup {
  try {
    const host = tuiHost(ctx);
    const env = seams.env ?? process.env;
    const s = settingsFrom(host.options, here);
    const log = new LogWriter(openLog(s.log));
    const guard = guardWith(log.line);
    const tickMs = seams.tickMs ?? TICK_MS;
    const pane = env.MUXBRIDGE_PANE_SESSION;
    if (pane) {
      const fallback = seams.exit ?? (() => process.kill(process.pid, "SIGTERM"));
      const exit = () => void (host.exit() || fallback());
      return new PaneKeeper(host, pane, log, guard, exit, tickMs).start();
    }
    const realm = globalThis as unknown as Record<symbol, TuiLink | undefined>;
    if (realm[ACTIVE]) {
      log.line("a bridge already runs for this TUI process; this load starts none");
      return () => log.close();
    }
    const link = new TuiLink(host, s, log, guard, tickMs, seams.parentOf ?? parentOf, () => {
      if (realm[ACTIVE] === link) delete realm[ACTIVE];
    });
    realm[ACTIVE] = link;
    return link.start();
  } catch {
    return NOTHING; // never throw into OpenCode; nothing usable to log to
  }
}

/** Pane mode: keeps the TUI on its child session; Ctrl+C ends the TUI. */
class PaneKeeper {
  #timer: ReturnType<typeof setInterval> | null = null;
  #noted = false;
  readonly #id: string | null;

  constructor(
    readonly host: TuiHost,
    id: string,
    readonly log: LogWriter,
    readonly guard: Guard,
    readonly exit: () => void,
    readonly tickMs: number,
  ) {
    this.#id = SESSION_ID.test(id) ? id : null;
  }

  start(): Cleanup {
    if (this.#id === null) {
      this.log.line("MUXBRIDGE_PANE_SESSION is not a session id: this TUI stays passive");
      return () => this.log.close();
    }
    const closes = this.host.bindKey("ctrl+c", "Close this muxbridge pane", this.guard(this.exit));
    this.log.line(
      `pane of ${this.#id}: no bridge; keeping the view on it` +
        (closes ? "; Ctrl+C closes the pane" : " (this TUI offers no keymap)"),
    );
    this.#timer = setInterval(this.guard(() => this.#tick()), this.tickMs);
    this.#timer.unref?.();
    return () => {
      if (this.#timer) clearInterval(this.#timer);
      this.#timer = null;
      return this.log.close();
    };
  }

  /** A view on another session (or home) goes back to the pane's child. */
  #tick(): void {
    const route = this.host.route();
    if (!route || route.type === "other") return; // a page or dialog: it returns by itself
    if (route.type === "session" && route.sessionID === this.#id) return;
    if (!this.host.navigate(this.#id!)) return;
    if (!this.#noted) {
      this.#noted = true;
      this.log.line(`the pane's view left ${this.#id}; taken back (logged once)`);
    }
  }
}

/** `waiting`: for the server's URL and the TUI's directory; `off`: nothing will run. */
type TuiMode = "waiting" | "running" | "off" | "stopped";

/** Normal mode: one bridge for this TUI, fed its events and its view. */
class TuiLink {
  #mode: TuiMode = "waiting";
  #bridge: BridgeProcess | null = null;
  #timer: ReturnType<typeof setInterval> | null = null;
  #unlisten: (() => void) | null = null;
  #serverUrl: string | null = null;
  /** The token pairing gave (the bridge's and its panes' password), when pairing worked. */
  #token: string | undefined;
  #repairing = false;
  #directory: string | null = null;
  #view: string | null = null;
  readonly #queue: LineQueue;

  constructor(
    readonly host: TuiHost,
    readonly s: Settings,
    readonly log: LogWriter,
    readonly guard: Guard,
    readonly tickMs: number,
    readonly parentOf: (pid: number) => number | null,
    readonly release: () => void,
  ) {
    this.#queue = new LineQueue(s.queueBytes, log.line);
  }

  start(): Cleanup {
    this.#unlisten = this.host.listen(this.guard((event: unknown) => this.#event(event)));
    if (!this.#unlisten) {
      this.#off("this TUI offers no event stream (ctx.data.listen): muxbridge is not started");
    } else {
      this.#timer = setInterval(this.guard(() => this.#tick()), this.tickMs);
      this.#timer.unref?.();
      this.#askServer().catch((err) => this.log.line(`internal error: ${err}`));
      this.#tick();
    }
    return () => this.#stop();
  }

  /** An event: the view first (the bridge should know what was shown when it came), then it. */
  #event(event: unknown): void {
    this.#tick();
    if (bag(event).type === "server.connected") this.#reconnected();
    const line = v2EventLine(event);
    if (line !== null) this.#enqueue(line);
  }

  /**
   * The TUI (re)connected to its server. A service that restarted with a new password no
   * longer takes the paired token: pair again and tell the bridge (a new hello, which also
   * restarts the panes whose TUIs hold the old token). A token that still works changes nothing.
   */
  #reconnected(): void {
    const url = this.#serverUrl;
    const token = this.#token;
    if (this.#mode !== "running" || url === null || token === undefined || this.#repairing) return;
    this.#repairing = true;
    (async () => {
      const res = await within(
        fetch(`${url}/api/info`, {
          headers: { authorization: `Basic ${btoa(`opencode:${token}`)}` },
        }),
        INFO_TIMEOUT_MS,
      );
      await res.body?.cancel();
      if (res.status !== 401 || this.#mode !== "running") return;
      const fresh = await this.#pair(url);
      if (fresh === undefined || this.#mode !== "running") return;
      this.#token = fresh;
      this.log.line("the server no longer took the paired token: paired again");
      this.#enqueue(this.#hello());
    })().catch((err) => this.log.line(`cannot check the paired token: ${err}`))
      .finally(() => (this.#repairing = false));
  }

  #enqueue(line: string): void {
    if (this.#mode !== "running" && this.#mode !== "waiting") return;
    if (this.#queue.push(line)) this.#queue.drain(this.#bridge);
  }

  /** Reads the route (sending a new view) and starts the bridge once everything is known. */
  #tick(): void {
    const route = this.host.route();
    if (route?.type === "session" && route.sessionID !== this.#view) {
      this.#view = route.sessionID;
      this.#enqueue(viewLine(route.sessionID));
    }
    if (this.#mode !== "waiting" || this.#serverUrl === null) return;
    const directory = this.host.directory();
    if (directory !== undefined) this.#launch(this.#serverUrl, directory);
  }

  /**
   * Asks the TUI for its server's URL, retrying with the restart backoff. A server the TUI runs
   * itself (`--standalone`: a `serve --stdio` child of this process) keeps its password to
   * itself, so no bridge could talk to it: nothing is started for it.
   */
  async #askServer(): Promise<void> {
    for (let attempt = 0;; attempt++) {
      let urls: string[];
      let pid: number | undefined;
      try {
        ({ urls, pid } = await within(this.host.serverInfo(), INFO_TIMEOUT_MS));
      } catch (err) {
        if (attempt >= this.s.maxRestarts) {
          return this.#off(
            `cannot learn the TUI's server URL (${err}); muxbridge is not started for this TUI`,
          );
        }
        await sleep(Math.min(this.s.backoffMs * 2 ** attempt, this.s.backoffMaxMs));
        if (this.#mode !== "waiting") return;
        continue;
      }
      if (this.#mode !== "waiting") return;
      if (urls.length === 0) {
        return this.#off("the TUI's server has no URL: muxbridge is not started for this TUI");
      }
      this.#token = await this.#pair(urls[0]);
      if (this.#mode !== "waiting") return;
      if (this.#token === undefined && pid !== undefined && this.parentOf(pid) === process.pid) {
        return this.#off(
          "this TUI runs its own private server (--standalone), whose password it keeps to " +
            "itself, and it could not pair: muxbridge is not started for this TUI (use the " +
            "background service: plain `opencode`)",
        );
      }
      this.#serverUrl = urls[0];
      return this.#tick();
    }
  }

  /**
   * A credential for the bridge from the TUI's own server: a pairing code
   * (`ctx.client.server.pair()`), redeemed at `<url>/auth/connect/<code>` for a token that works
   * as the password (2.1.2, `docs/opencode.md`). So a TUI on its private `--standalone` server
   * or on any `--server` gets panes too, and no state file is read. Undefined when the TUI
   * cannot pair; the bridge then finds the password itself.
   */
  async #pair(url: string): Promise<string | undefined> {
    try {
      const code = await within(this.host.pair(), INFO_TIMEOUT_MS);
      if (!code || !/^[A-Za-z0-9_.~-]{1,512}$/.test(code)) return undefined;
      const res = await within(
        fetch(`${url}/auth/connect/${encodeURIComponent(code)}`, {
          headers: { accept: "application/json" },
          redirect: "manual",
        }),
        INFO_TIMEOUT_MS,
      );
      if (!res.ok) {
        await res.body?.cancel();
        this.log.line(`pairing with the TUI's server answered ${res.status}; not paired`);
        return undefined;
      }
      const token = (await res.json() as { token?: unknown })?.token;
      return typeof token === "string" && /^[\x21-\x7e]{1,4096}$/.test(token) ? token : undefined;
    } catch (err) {
      this.log.line(`cannot pair with the TUI's server (${err}); the bridge finds its password`);
      return undefined;
    }
  }

  #launch(serverUrl: string, directory: string): void {
    const s = this.s;
    const refused = s.vet();
    if (refused !== null) return this.#off(refused);
    this.#mode = "running";
    this.log.line(
      `starting ${JSON.stringify(s.command.join(" "))} (from ${s.commandFrom}) for the TUI ` +
        `of ${serverUrl} in ${directory}`,
    );
    if (s.recordedVersion && s.recordedVersion !== PLUGIN_VERSION) {
      this.log.line(
        `version mismatch: this plugin is muxbridge ${PLUGIN_VERSION}, ${SIDECAR} was written ` +
          `by ${s.recordedVersion}; run \`muxbridge install\` again`,
      );
    }
    this.#directory = directory;
    let starts = 0;
    this.#bridge = new BridgeProcess({
      settings: s,
      args: ["bridge", "--dir", directory],
      // A restarted bridge learns the view at once; the first gets it from the queue.
      hello: () => {
        const hello = this.#hello();
        return starts++ > 0 && this.#view ? hello + viewLine(this.#view) : hello;
      },
      stderr: this.log.fd,
      log: this.log.line,
      guard: this.guard,
      vet: s.vet,
      onWritable: () => this.#queue.drain(this.#bridge),
      onOutput: bridgeOutput(this.log.line),
      onGaveUp: () => {
        this.#mode = "off";
        this.#queue.clear();
      },
    });
    this.#bridge.start();
  }

  /** The bridge's hello, with the token as it is now. */
  #hello(): string {
    return tuiHelloLine({
      serverUrl: this.#serverUrl ?? "",
      directory: this.#directory ?? "",
      opencode: this.host.version(),
      ...(this.#token ? { token: this.#token } : {}),
    });
  }

  /** Nothing will run: says why once. */
  #off(why: string): void {
    if (this.#mode === "stopped" || this.#mode === "off") return;
    this.#mode = "off";
    this.#queue.clear();
    this.log.line(why);
  }

  /** The cleanup: ends the bridge (gracefully first), stops listening, closes the log. */
  async #stop(): Promise<void> {
    if (this.#mode === "stopped") return;
    const was = this.#mode;
    this.#mode = "stopped";
    this.release();
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    try {
      this.#unlisten?.();
    } catch { /* the TUI is going away anyway */ }
    await this.#bridge?.stop(this.s.stopGraceMs);
    this.#queue.reportTotal();
    if (was !== "off") this.log.line("stopped");
    await this.log.close();
  }
}

/**
 * The parent of a process: Linux `/proc/<pid>/stat`, else `ps -o ppid=` (macOS; bounded); null
 * when it cannot be told.
 */
function parentOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return Number.isInteger(ppid) ? ppid : null;
  } catch { /* no /proc here */ }
  try {
    const out = execFileSync("ps", ["-o", "ppid=", "-p", String(pid)], {
      encoding: "utf8",
      timeout: 2000,
      stdio: ["ignore", "pipe", "ignore"],
    }).trim();
    return /^\d+$/.test(out) ? Number(out) : null;
  } catch {
    return null;
  }
}

/** `p`, or a rejection after `ms`. */
function within<T>(p: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    t.unref?.();
    p.then((v) => {
      clearTimeout(t);
      resolve(v);
    }, (err) => {
      clearTimeout(t);
      reject(err);
    });
  });
}

/** Resolves after `ms` (never keeping the TUI alive). */
function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref?.());
}
