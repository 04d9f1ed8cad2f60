/**
 * `muxbridge close`: graceful close of a pane muxbridge owns (`--force`: any pane).
 *
 * @module
 */

import { closePane, interruptOf } from "../../session/close_pane.ts";
import { MuxError } from "../../sys/errors.ts";
import type { Command } from "./_command.ts";
import { callerPanes, loadConfig, openBackend, paneStore } from "./_context.ts";
import { paneIdArgument } from "./_flags.ts";

/** The `close` command. */
export const closeCommand: Command = {
  name: "close",
  summary: "Close a pane muxbridge owns (interrupt, grace, kill, verify)",
  usage: "muxbridge close PANE_ID [--force] [--json]",
  help: [
    "Sends the interrupt, waits up to close_grace_ms for the program to end, kills the pane,",
    "verifies it is gone and that its program did not survive. A pane that is not there (closed",
    "already, or never there) is success: exit 0, `alreadyGone: true`. Refuses a pane that is there",
    "but has no record of muxbridge (exit 1) unless --force (multiplexer marks alone are not",
    "ownership), and always refuses the pane it runs in.",
    "",
    "Example:",
    "  muxbridge close %5",
  ].join("\n"),
  flags: { force: { type: "boolean", help: "Close the pane even if muxbridge does not own it" } },
  positionals: [1, 1],
  json: true,
  async run(inv, deps) {
    const paneId = paneIdArgument(inv.positionals[0]);
    let config = loadConfig(inv.global, deps);
    const store = paneStore(config, deps);
    const candidates = store.list().records.filter((r) =>
      r.paneId === paneId && (inv.global.backend === undefined || r.backend === inv.global.backend)
    );
    const record = candidates[0];
    if (record && inv.global.backend === undefined && config.backend === "auto") {
      config = { ...config, backend: record.backend };
    }
    const backend = await openBackend(config, deps);
    if (callerPanes(deps).some((p) => p.backend === backend.name && p.paneId === paneId)) {
      await backend.dispose?.();
      throw new MuxError("not_owned", `Cannot close pane "${paneId}": muxbridge runs in it`, {
        hint: "Close it from the multiplexer itself",
      });
    }
    const info = await backend.inspect(paneId, deps.signal);
    // Only a record makes a pane muxbridge's: marks are hints any program can set.
    const owned = record !== undefined && record.backend === backend.name;
    if (!owned && !inv.values.force && info !== null) {
      await backend.dispose?.();
      throw new MuxError(
        "not_owned",
        `Cannot close pane "${paneId}": muxbridge did not open it (it has no record of it)`,
        { hint: "Pass --force to close it anyway" },
      );
    }
    const result = await closePane(backend, paneId, {
      graceMs: config.close_grace_ms,
      survivorGraceMs: config.survivor_grace_ms,
      clock: deps.clock,
      processes: deps.processes,
      signal: deps.signal,
      pid: record?.pid,
      pidStart: record?.pidStart,
      interrupt: interruptOf(record),
    });
    store.remove(backend.name, paneId);
    if (record?.token !== undefined) store.removeExit(record.token);
    await backend.dispose?.();
    return {
      json: { paneId, closed: true, alreadyGone: result.alreadyGone },
      text: result.alreadyGone ? `${paneId} was already gone\n` : `closed ${paneId}\n`,
    };
  },
};
