/**
 * What the muxbridge TUI plugin reads from and does to an OpenCode 2.x TUI, read from the
 * `setup(ctx)` context without trusting its shape: a context that lacks a part (another
 * OpenCode version) reads as "not there", never as a crash. The names follow upstream's TUI
 * plugin context (`packages/plugin/src/tui/context.ts` in anomalyco/opencode).
 *
 * @module
 */

import { bag, text } from "./values.ts";

/** A TUI route, as far as muxbridge reads it. */
export type TuiRoute = { type: "session"; sessionID: string } | { type: "home" } | {
  type: "other";
};

/** The TUI, as muxbridge uses it. */
export interface TuiHost {
  /** The plugin's options (`{ "package": …, "options": {…} }` in the config). */
  readonly options: Record<string, unknown>;
  /** OpenCode's version (`ctx.app.version`). */
  version(): string | undefined;
  /** The TUI's current directory (`ctx.location.directory`); unset until the TUI connected. */
  directory(): string | undefined;
  /**
   * The server's URLs and pid (`ctx.client.server.info()`); rejects when it cannot be asked.
   */
  serverInfo(): Promise<{ urls: string[]; pid?: number }>;
  /**
   * A one-time pairing code of the TUI's server (`ctx.client.server.pair()`, 2.x: short-lived,
   * single use; redeemed at `<url>/auth/connect/<code>` for a token that works as the password);
   * undefined when the TUI cannot pair.
   */
  pair(): Promise<string | undefined>;
  /** What the TUI shows (`ctx.ui.router.current()`); undefined when it cannot tell. */
  route(): TuiRoute | undefined;
  /** Shows a session (`ctx.ui.router.navigate`); false when the TUI offers no router. */
  navigate(sessionID: string): boolean;
  /**
   * Calls `handler` with each event of the TUI's event stream (`ctx.data.listen`, the
   * `/api/event` object); returns the unsubscribe, or null when the TUI offers no stream.
   */
  listen(handler: (event: unknown) => void): (() => void) | null;
  /**
   * Binds a key for this TUI (`ctx.keymap.layer`, a global layer above OpenCode's own); false
   * when the TUI offers no keymap.
   */
  bindKey(key: string, title: string, run: () => void): boolean;
  /** Ends the TUI as its own exit command does (`app.exit`); false when it cannot. */
  exit(): boolean;
}

/** A function property of `v`, bound to it. */
// deno-lint-ignore no-explicit-any
function method(v: unknown, name: string): ((...args: any[]) => any) | undefined {
  const fn = bag(v)[name];
  return typeof fn === "function" ? fn.bind(v) : undefined;
}

/**
 * Reads a route: `{type: "session", sessionID}` and `{type: "home"}` are told apart, every
 * other route (a plugin's page, a dialog's) is `other`.
 */
export function readRoute(v: unknown): TuiRoute | undefined {
  const r = bag(v);
  const type = text(r.type);
  if (type === undefined) return undefined;
  if (type === "session") {
    const sessionID = text(r.sessionID);
    return sessionID ? { type, sessionID } : { type: "other" };
  }
  return type === "home" ? { type } : { type: "other" };
}

/**
 * The {@linkcode TuiHost} over a 2.x TUI plugin context.
 *
 * @param ctx What OpenCode handed `setup`.
 * @returns The host.
 */
export function tuiHost(ctx: unknown): TuiHost {
  const c = bag(ctx);
  const router = () => bag(bag(c.ui).router);
  return {
    options: bag(c.options),
    version: () => text(bag(c.app).version),
    directory: () => text(bag(c.location).directory) || undefined,
    async serverInfo() {
      const info = method(bag(c.client).server, "info");
      if (!info) throw new Error("the TUI's client has no server.info()");
      const raw = bag(await info());
      const got = Array.isArray(raw.urls) ? raw : bag(raw.data);
      const urls = Array.isArray(got.urls)
        ? got.urls.filter((u): u is string => typeof u === "string")
        : [];
      const pid = typeof got.pid === "number" && Number.isInteger(got.pid) ? got.pid : undefined;
      return { urls, ...(pid ? { pid } : {}) };
    },
    async pair() {
      const pair = method(bag(c.client).server, "pair");
      if (!pair) return undefined;
      const raw = bag(await pair());
      return text(raw.code) ?? text(bag(raw.data).code);
    },
    route() {
      const current = method(router(), "current");
      return current ? readRoute(current()) : undefined;
    },
    navigate(sessionID) {
      const navigate = method(router(), "navigate");
      if (!navigate) return false;
      navigate({ type: "session", sessionID });
      return true;
    },
    listen(handler) {
      const listen = method(c.data, "listen");
      if (!listen) return null;
      const off = listen((e: unknown) => handler(bag(e).details));
      return typeof off === "function" ? off : () => {};
    },
    bindKey(key, title, run) {
      const layer = method(c.keymap, "layer");
      if (!layer) return false;
      const spec = () => ({
        mode: "global",
        priority: 1000,
        commands: [{ bind: key, title, group: "muxbridge", run }],
      });
      try {
        layer(spec);
        return true;
      } catch {
        // Some TUIs want layers made inside a component: a slot that renders nothing.
        const slot = method(c.ui, "slot");
        if (!slot) return false;
        slot({
          append: "app",
          render: () => {
            layer(spec);
            return null;
          },
        });
        return true;
      }
    },
    exit() {
      const dispatch = method(c.keymap, "dispatch");
      if (!dispatch) return false;
      dispatch("app.exit");
      return true;
    },
  };
}
