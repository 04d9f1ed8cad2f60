/**
 * Private to `demo.ts`: what the demo reads back from its private tmux server: a pane's title,
 * every pane's place, and whether the layout pass has laid out the panes it expects.
 *
 * @module
 */

import type { Config } from "../../config/config.ts";

/** The demo's tmux: one call against its private server. */
export type Tmux = (...args: string[]) => Promise<{ code: number; stdout: string; stderr: string }>;

/** A pane's title as tmux shows it. */
export async function paneTitle(tmux: Tmux, pane: string): Promise<string> {
  return (await tmux(
    "list-panes",
    "-t",
    pane,
    "-f",
    `#{==:#{pane_id},${pane}}`,
    "-F",
    "#{pane_title}",
  )).stdout.trim();
}

/** One pane's place, as `list-panes` reports it. */
export interface Placed {
  /** The pane id. */
  id: string;
  /** Left column, in cells. */
  left: number;
  /** Top row, in cells. */
  top: number;
  /** Width, in cells. */
  width: number;
  /** Height, in cells. */
  height: number;
  /** Its title. */
  title: string;
  /** Its window's width, in cells. */
  windowWidth: number;
  /** Its window's height, in cells. */
  windowHeight: number;
}

/** Every pane of the demo's window with its place, in tmux's order. */
export async function placedPanes(tmux: Tmux): Promise<Placed[]> {
  const sep = "\u001f";
  const out = await tmux(
    "list-panes",
    "-t",
    "demo:0",
    "-F",
    [
      "#{pane_id}",
      "#{pane_left}",
      "#{pane_top}",
      "#{pane_width}",
      "#{pane_height}",
      "#{pane_title}",
      "#{window_width}",
      "#{window_height}",
    ].join(sep),
  );
  return out.stdout.trim().split("\n").filter(Boolean).map((l) => l.split(sep)).map((r) => ({
    id: r[0],
    left: +r[1],
    top: +r[2],
    width: +r[3],
    height: +r[4],
    title: r[5],
    windowWidth: +r[6],
    windowHeight: +r[7],
  }));
}

/**
 * Whether the window shows exactly `expected` in the main-vertical layout: the parent on the
 * left at main_pane_size percent, the children stacked on the right with even heights.
 */
export function laidOut(
  panes: readonly Placed[],
  expected: readonly string[],
  config: Config,
): boolean {
  if (panes.length !== expected.length || !expected.every((id) => panes.some((p) => p.id === id))) {
    return false;
  }
  const [main, ...rest] = expected.map((id) => panes.find((p) => p.id === id)!);
  const mainWidth = Math.round((main.windowWidth * config.main_pane_size) / 100);
  const heights = rest.map((p) => p.height);
  return main.left === 0 && Math.abs(main.width - mainWidth) <= 1 &&
    rest.every((p) => p.left > main.width) &&
    Math.max(...heights) - Math.min(...heights) <= 1;
}
