/**
 * Private to the tmux backend: the one tmux call that opens a pane. Pure: it builds the command
 * list and reads what tmux printed back, so the chain is tested without a server.
 *
 * The call is one command list, `;`-separated, that tmux's server runs from start to end before
 * it reads a command from any other client (`cmdq_next` in `cmd-queue.c` runs a client's queue
 * until it is empty or a command waits, and none of these waits; `server_loop` in `server.c`
 * only then turns to the next client): the split, the ownership marks, the title and the layout,
 * then a listing of the anchor's session for the next decision. See `docs/backends/tmux.md`.
 *
 * The new pane has no id muxbridge knows until the split prints it, and with `-d` (focus stays
 * where it is) tmux does not make it the default target of later commands, so they name it by
 * its index: a split puts the new pane right after the pane it splits (`window_add_pane`, tmux
 * 3.3a `window.c`), so it is `@W.(K+1)` when the split pane is `@W.K`. The split and everything
 * after it run only if, at that moment, the split pane is still `@W.K` and its window's layout is
 * still the one the decision was made on (`if-shell -F`, a format evaluated by the server, no
 * shell); otherwise nothing opens and the listing at the end lets the caller decide again.
 *
 * @module
 */

import type { PaneId } from "../../lib/sys/validate.ts";
import { commandLine, type TmuxArgs } from "./_command.ts";
import type { AddedPane } from "./_layout.ts";
import { PANE_FORMAT, parseSpawnLine, RS, SPAWN_FORMAT } from "./_parse.ts";
import type { Placement } from "./_place.ts";

/** The name of overflow windows muxbridge opens. */
export const OVERFLOW_NAME = "muxbridge";

/** What the new pane gets, whatever its place. */
export interface OpenSpec {
  /** The anchor pane (`%N`): the listing at the end is of its session. */
  anchor: string;
  /** Flags of the new pane other than its place: `-c DIR`, `-e NAME=value`… */
  paneFlags: readonly string[];
  /** `--` and the program's argv. */
  command: readonly string[];
  /**
   * Pane options set on the new pane in the same call, before any other client can see it
   * (the ownership marks; a spawn token fits here too).
   */
  options: ReadonlyArray<readonly [string, string]>;
  /** The title, already escaped for `select-pane -T` (`escapeTitle`: no format, no style). */
  title: string;
  /** The layout commands of the split's window once the new pane is in it (none: leave it). */
  layout?: (added: AddedPane) => string[][];
}

/** The listing of the anchor's session that ends a call. */
export function sessionListing(anchor: string): TmuxArgs {
  return ["list-panes", "-s", "-t", anchor, "-F", PANE_FORMAT];
}

/**
 * Escapes text to stand for itself inside a `#{==:…,…}` operand: `#`, `,` and `}` are the
 * characters the format parser reads there (`format_skip`, tmux 3.3a `format.c`).
 */
function formatLiteral(text: string): string {
  return text.replace(/[#,}]/g, (c) => `#${c}`);
}

/**
 * The condition that a window's layout (every pane's id, place and size) is still `layout`.
 *
 * @param window The window's row (`@N` and its layout when the decision was made).
 * @returns A format that expands to 1 or 0 with `-t` a pane or the window itself.
 */
export function layoutGuard(window: { windowId: string; windowLayout: string }): string {
  return `#{&&:#{==:#{window_id},${window.windowId}},` +
    `#{==:#{window_layout},${formatLiteral(window.windowLayout)}}}`;
}

/**
 * The condition that the split pane is where the decision saw it: same window, same index, and
 * the window's layout unchanged.
 *
 * @param target The split pane's row.
 * @returns A format that expands to 1 or 0 with `-t` the split pane.
 */
export function unchangedGuard(
  target: { windowId: string; index: number; windowLayout: string },
): string {
  return `#{&&:#{==:#{pane_index},${target.index}},${layoutGuard(target)}}`;
}

/**
 * The commands of the call that opens a pane at `placement`.
 *
 * @param placement Where (from `planPlacement`).
 * @param spec What the pane gets.
 * @returns The commands, the first a guarded block, the last the listing.
 */
export function openCommands(placement: Placement, spec: OpenSpec): TmuxArgs[] {
  const printNew = ["-d", "-P", "-F", SPAWN_FORMAT];
  const marks = (target: string): TmuxArgs[] => [
    ...spec.options.map(([name, value]) => ["set-option", "-p", "-t", target, name, value]),
    ["select-pane", "-t", target, "-T", spec.title],
  ];
  if (placement.kind === "split") {
    const { target, direction } = placement;
    const added: AddedPane = {
      target: `${target.windowId}.${target.index + 1}`,
      after: target.paneId,
      direction,
    };
    const block: TmuxArgs[] = [
      [
        "split-window",
        direction,
        ...printNew,
        ...spec.paneFlags,
        "-t",
        target.paneId,
        ...spec.command,
      ],
      ...marks(added.target),
      ...(spec.layout?.(added) ?? []),
    ];
    return [
      ["if-shell", "-F", "-t", target.paneId, unchangedGuard(target), commandLine(block)],
      sessionListing(spec.anchor),
    ];
  }
  const window = `${placement.sessionId}:${placement.index}`;
  const block: TmuxArgs[] = [
    [
      "new-window",
      ...printNew,
      "-n",
      OVERFLOW_NAME,
      ...spec.paneFlags,
      "-t",
      window,
      ...spec.command,
    ],
    ["set-option", "-w", "-t", window, "@muxbridge-overflow", "1"],
    ...marks(window),
  ];
  // The block's own failure (the index was taken meanwhile) must not skip the listing: a block
  // run by if-shell is a command group of its own (`cmdq_remove_group`, cmd-queue.c).
  return [["if-shell", "-F", "1", commandLine(block)], sessionListing(spec.anchor)];
}

/** What an open call printed. */
export interface OpenOutput {
  /** The new pane, when the split or new-window ran. */
  spawned?: { paneId: PaneId; pid: number };
  /** The listing's text, when it ran (parse with `parsePaneRows`). */
  listing?: string;
}

/**
 * Splits an open call's stdout: the new pane's `-P` line comes first, the listing (rows that
 * start with {@linkcode RS}) last.
 *
 * @param stdout What tmux printed.
 * @returns The parts that are there.
 * @throws {MuxError} `unparseable_output` for a first line that is not a pane line.
 */
export function parseOpenOutput(stdout: string): OpenOutput {
  const at = stdout.indexOf(RS);
  const head = (at < 0 ? stdout : stdout.slice(0, at)).trim();
  const out: OpenOutput = {};
  if (head !== "") out.spawned = parseSpawnLine(head);
  if (at >= 0) out.listing = stdout.slice(at);
  return out;
}
