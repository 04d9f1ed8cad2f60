/**
 * Watches every layout change of a tmux session as it happens: a control-mode client
 * (`tmux -C attach`) receives `%layout-change @W <layout> …` for each change to any window of
 * the session, so a pane that was resized even for a moment shows up, which polling could
 * miss. A control client without a size of its own does not resize the session's windows
 * (observed live, tmux 3.3a: a 120x40 window stayed 120x40).
 *
 * @module
 */

import { until } from "./real_life.ts";
import type { TmuxServer } from "./tmux_server.ts";

/** Where a pane is and how big: `left,top widthxheight`. */
export type Geometry = string;

/** One layout change of one window. */
export interface LayoutChange {
  /** `@N`. */
  window: string;
  /** Every pane of the window after the change, by `%N`. */
  panes: Map<string, Geometry>;
}

/** A running observer. */
export interface TmuxObserver {
  /** Every change so far, in order. */
  changes: LayoutChange[];
  /**
   * Waits until every notification tmux sent before this call has arrived (a command's reply
   * comes after them on the same stream), then stops the client.
   */
  stop(): Promise<void>;
}

/**
 * Reads the panes of a `#{window_layout}` string: each pane is `WxH,X,Y,ID` (containers have
 * `{`/`[` where a pane has `,ID`; tmux `layout-custom.c`).
 *
 * @param layout The layout string.
 * @returns Geometry by pane id.
 */
export function layoutPanes(layout: string): Map<string, Geometry> {
  const panes = new Map<string, Geometry>();
  for (const m of layout.matchAll(/(\d+)x(\d+),(\d+),(\d+),(\d+)(?=[,}\]]|$)/g)) {
    panes.set(`%${m[5]}`, `${m[3]},${m[4]} ${m[1]}x${m[2]}`);
  }
  return panes;
}

/**
 * Attaches a control-mode client to session `t` of the server.
 *
 * @param server The private server.
 * @returns The observer; always `stop()` it.
 */
export async function observeLayouts(server: TmuxServer): Promise<TmuxObserver> {
  const child = new Deno.Command("tmux", {
    args: ["-L", server.socketName, "-C", "attach", "-t", "t"],
    env: server.env,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const writer = child.stdin.getWriter();
  const changes: LayoutChange[] = [];
  let attached = false;
  let synced = false;
  const reading = (async () => {
    let buf = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        const m = /^%layout-change (@\d+) (\S+)/.exec(line);
        if (m) changes.push({ window: m[1], panes: layoutPanes(m[2]) });
        if (line.startsWith("%session-changed")) attached = true;
        if (line === "muxbridge-observer-sync") synced = true;
      }
    }
  })();
  const stop = async () => {
    try {
      await writer.write(new TextEncoder().encode("display-message -p muxbridge-observer-sync\n"));
      await until("the control client to catch up", () => synced);
    } finally {
      await writer.close().catch(() => {});
      try {
        child.kill("SIGTERM");
      } catch { /* exited with its input */ }
      await child.status;
      await reading;
    }
  };
  try {
    await until("the control client to attach", () => attached);
  } catch (err) {
    await stop().catch(() => {});
    throw err;
  }
  return { changes, stop };
}
