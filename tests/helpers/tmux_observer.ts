/**
 * Watches every layout change of a tmux server as it happens: a global `window-layout-changed`
 * hook appends `@W=<layout>|` to a user option of the server for each change to any window, so
 * a pane that was resized even for a moment shows up, which polling could miss. The hook fires
 * from the same tmux notification that control mode's `%layout-change` does.
 *
 * The hook runs inside the server (`set-option -gaF`), not a shell: tmux runs notification hooks
 * one at a time from its own queue, and a `run-shell` hook (this observer's first form) makes
 * that queue wait for each shell. Under load the hooks fell behind the changes, and once in a
 * while the queue stopped for good, so the last layouts were never written (the split test
 * failed with them missing, in CI on a busy 2-core machine and here, one run in five). tmux
 * empties its own queue before it runs a client's next command, so what `stop` reads holds
 * every change made before it.
 *
 * Not a control-mode client: with one attached, tmux 3.3a's server crashed (every session lost)
 * when a window was destroyed right after its active pane changed — seen live while
 * benchmarking, and twice in full-suite runs while this observer was a control client.
 *
 * @module
 */

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
  /** Removes the hook and reads every change recorded so far into `changes`. */
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
 * Installs the layout hook on the server.
 *
 * @param server The private server.
 * @returns The observer; always `stop()` it.
 */
export async function observeLayouts(server: TmuxServer): Promise<TmuxObserver> {
  const option = "@muxbridge_test_layouts";
  await server.tmux(["set-option", "-g", option, ""]);
  await server.tmux([
    "set-hook",
    "-g",
    "window-layout-changed",
    `set-option -gaF ${option} "#{window_id}=#{window_layout}|"`,
  ]);
  const changes: LayoutChange[] = [];
  const stop = async () => {
    const text = await server.tmux(["show-options", "-gqv", option]);
    await server.run(["set-hook", "-gu", "window-layout-changed"]).catch(() => {});
    await server.run(["set-option", "-gu", option]).catch(() => {});
    changes.length = 0;
    for (const entry of text.split("|")) {
      const m = /^(@\d+)=(\S+)$/.exec(entry.trim());
      if (m) changes.push({ window: m[1], panes: layoutPanes(m[2]) });
    }
  };
  return { changes, stop };
}
