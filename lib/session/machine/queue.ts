/**
 * The two controls on which children get a pane, as pure decisions: `exclude` (a child whose
 * agent or title matches a pattern gets none) and `max_panes` (above it children wait in a queue,
 * first come first served, and get a pane when one frees).
 *
 * A pane counts against `max_panes` from the moment it is asked for until it is closed: while
 * the server is awaited, the spawn runs, the pane is open or closing. A pane held to show why its
 * program failed does not count (it is no live pane), nor does one muxbridge could not close.
 *
 * @module
 */

import type { SessionId } from "../../sys/validate.ts";
import type { ExcludePattern, MachineConfig, SessionRecord, SessionState } from "./types.ts";

/**
 * The `exclude` pattern a child matches, by its agent name or its title.
 *
 * @param record The child.
 * @param config The machine config (`exclude`).
 * @returns The matching pattern and what it matched, or null.
 *
 * @example
 * ```ts
 * import { validateSessionId } from "../../sys/validate.ts";
 * import { excludedBy, newRecord } from "./mod.ts";
 * const child = newRecord(validateSessionId("ses_c"), "ses_p", "map lib", undefined, "explore");
 * excludedBy(child, { exclude: [{ pattern: "explore", test: (t) => t === "explore" }] });
 * // { pattern: "explore", what: 'agent "explore"' }
 * ```
 */
export function excludedBy(
  record: SessionRecord,
  config: Pick<MachineConfig, "exclude">,
): { pattern: string; what: string } | null {
  const patterns: readonly ExcludePattern[] = config.exclude ?? [];
  for (const p of patterns) {
    if (record.agent !== undefined && p.test(record.agent)) {
      return { pattern: p.pattern, what: `agent ${JSON.stringify(record.agent)}` };
    }
    if (p.test(record.title)) {
      return { pattern: p.pattern, what: `title ${JSON.stringify(record.title)}` };
    }
  }
  return null;
}

/** Whether a state holds one of the `max_panes` places. */
export function holdsPlace(state: SessionState): boolean {
  return state.kind === "awaiting" || state.kind === "opening" || state.kind === "open" ||
    state.kind === "closing";
}

/** What {@linkcode admissions} decided. */
export interface Admissions {
  /** Queued children that get a pane now, in queue order. */
  readonly admit: readonly SessionId[];
  /** Queued children not yet told their place, with it (1: next). */
  readonly waiting: ReadonlyArray<{ readonly id: SessionId; readonly position: number }>;
}

/**
 * Which queued children get a pane now, and the places of the others not yet told theirs.
 *
 * @param records Every record, in the order the children were first seen.
 * @param maxPanes `max_panes` (undefined: no limit, every queued child goes).
 * @returns The decisions.
 */
export function admissions(
  records: readonly SessionRecord[],
  maxPanes: number | undefined,
): Admissions {
  const queue = records
    .filter((r) => r.state.kind === "queued")
    // Stable: children queued at the same moment keep the order they were first seen in.
    .sort((a, b) => queuedSince(a) - queuedSince(b));
  if (queue.length === 0) return { admit: [], waiting: [] };
  const used = records.filter((r) => holdsPlace(r.state)).length;
  const free = maxPanes === undefined ? queue.length : Math.max(0, maxPanes - used);
  const admit = queue.slice(0, free).map((r) => r.id);
  const waiting = queue.slice(free).flatMap((r, i) =>
    r.state.kind === "queued" && !r.state.reported ? [{ id: r.id, position: i + 1 }] : []
  );
  return { admit, waiting };
}

function queuedSince(record: SessionRecord): number {
  return record.state.kind === "queued" ? record.state.since : 0;
}
