/**
 * How the loop reads its config: the machine's timing ({@linkcode machineConfig}), and what a
 * config that arrives while sessions are tracked (a `bridge.hello`'s) changes, and when.
 *
 * The rule for a new config: the new config applies in full, each key from the next time the loop reads it.
 * Nothing already under way is redone: an armed idle close keeps its deadline, an open pane keeps
 * the backend that opened it, a close in flight keeps its grace. {@linkcode describeConfigChange}
 * says, in one line, which changed keys take effect when.
 *
 * @module
 */

import type { Backend } from "../backend/backend.ts";
import type { Config } from "../config/config.ts";
import { compileGlob } from "../sys/glob.ts";
import { type MachineConfig, STATUS_INTERVAL_MS } from "./machine/mod.ts";

/**
 * The machine timing derived from config.
 *
 * @param config The resolved config.
 * @param server Whether a server client is there (readiness, polls and rechecks).
 * @param backend The backend, whose own minimum pane lifetime may raise the config's.
 * @returns The machine config.
 */
export function machineConfig(
  config: Config,
  server: boolean,
  backend?: Pick<Backend, "minPaneLifetimeMs"> | null,
): MachineConfig {
  return {
    idleCloseDelayMs: config.idle_close_delay_ms,
    minPaneLifetimeMs: Math.max(config.min_pane_lifetime_ms, backend?.minPaneLifetimeMs ?? 0),
    closeRetries: 2,
    closeRetryDelayMs: config.close_retry_delay_ms,
    recheck: server,
    readiness: server,
    statusInTitle: config.status_in_title,
    statusIntervalMs: STATUS_INTERVAL_MS,
    failedHoldMs: config.failed_pane_hold_ms,
    ...(config.max_panes === undefined ? {} : { maxPanes: config.max_panes }),
    // Valid: the config schema refused any pattern that is not.
    exclude: config.exclude.map((pattern) => {
      const glob = compileGlob(pattern);
      return { pattern, test: (text: string) => glob.test(text) };
    }),
  };
}

/** When a changed key takes effect in a running loop. */
const WHEN: Readonly<Record<string, string>> = {
  idle_close_delay_ms: "at each pane's next idle signal",
  min_pane_lifetime_ms: "at each pane's next idle signal",
  close_grace_ms: "at the next close",
  close_retry_delay_ms: "at the next close",
  survivor_grace_ms: "at the next close",
  layout: "at the next layout pass",
  main_pane_size: "at the next layout pass",
  poll_interval_ms: "at the next poll",
  readiness_timeout_ms: "for the next pane to open",
  max_tracked_sessions: "for the next new child",
  exclude: "for the next child to get a pane",
  max_panes: "for the next child to get a pane",
  status_in_title: "at each pane's next status change",
  attention_bell: "for the next child that starts waiting for the user",
  attention_focus: "for the next child that starts waiting for the user",
  attention_command: "for the next child that starts waiting for the user",
  failed_pane_hold_ms: "for the next pane whose program fails",
  close_on_exit: "when the bridge ends",
  log_level: "never: the log is set up when the bridge starts",
};

/** Keys not named in {@linkcode WHEN} (`backend`, `placement`, the backend sections …). */
const NEW_PANES = "for new panes (open panes keep their backend)";

/**
 * Says which keys a new config changes and when each takes effect in a running loop.
 *
 * @param before The config in use.
 * @param after The new one.
 * @returns `key, key at …; key at …`, or null when nothing changed.
 *
 * @example
 * ```ts
 * import { resolveConfig } from "../config/config.ts";
 * import { describeConfigChange } from "./loop_config.ts";
 * const before = resolveConfig({ env: () => undefined });
 * const after = { ...before, layout: "tiled" as const, idle_close_delay_ms: 9000 };
 * describeConfigChange(before, after);
 * // "layout at the next layout pass; idle_close_delay_ms at each pane's next idle signal"
 * ```
 */
export function describeConfigChange(before: Config, after: Config): string | null {
  const byWhen = new Map<string, string[]>();
  for (const key of Object.keys(after) as Array<keyof Config>) {
    if (JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
    const when = WHEN[key] ?? NEW_PANES;
    byWhen.set(when, [...(byWhen.get(when) ?? []), key]);
  }
  if (byWhen.size === 0) return null;
  return [...byWhen].map(([when, keys]) => `${keys.join(", ")} ${when}`).join("; ");
}
