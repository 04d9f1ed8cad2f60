/**
 * `muxbridge close`: graceful close of a pane muxbridge owns (`--force`: any pane).
 *
 * @module
 */

import { closePane, interruptOf } from "../../session/close_pane.ts";
import { type PaneProof, provePane } from "../../session/pane_proof.ts";
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
    "ownership), and always refuses the pane it runs in. A recorded pane is closed only while it",
    "is provably the one recorded (the same multiplexer instance, the recorded program): a",
    "restarted multiplexer hands the same ids out again. Otherwise the record is retired and the",
    "pane refused (exit 1) unless --force.",
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
    // A record names a pane of one multiplexer instance, running one program: an id that exists
    // may be another pane now (a restarted server hands ids out again).
    let proven = info === null;
    if (owned && info !== null) {
      let proof: PaneProof;
      try {
        proof = await provePane(backend, record, info, {
          processes: deps.processes,
          signal: deps.signal,
        });
      } catch (err) {
        await backend.dispose?.();
        throw err;
      }
      proven = proof.proven;
      if (!proof.proven && !inv.values.force) {
        store.remove(record.backend, record.paneId);
        if (record.token !== undefined) store.removeExit(record.token);
        await backend.dispose?.();
        deps.log.warn(
          `left ${backend.name} pane ${paneId} alone and retired its record (${record.sessionId}): ${proof.reason}`,
        );
        throw new MuxError(
          "not_owned",
          `Cannot close pane "${paneId}": it is not provably the pane muxbridge opened (${proof.reason}); its record was retired`,
          { hint: "Pass --force to close it anyway" },
        );
      }
    }
    // The recorded program stands for the pane only when the pane is the recorded one (or gone).
    const program = proven && record
      ? { pid: record.pid, pidStart: record.pidStart, token: record.token }
      : {};
    const result = await closePane(backend, paneId, {
      graceMs: config.close_grace_ms,
      survivorGraceMs: config.survivor_grace_ms,
      clock: deps.clock,
      processes: deps.processes,
      signal: deps.signal,
      ...program,
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
