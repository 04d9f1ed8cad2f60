/**
 * Private to the herdr backend: the herdr operations muxbridge uses, each described once
 * (`_ops.ts`) and sent over herdr's API socket or one `herdr` process per operation
 * (`_transport.ts` decides, and falls back to the CLI where that is safe).
 *
 * Both ways carry the same values: the socket's `pane.split` `env` holds only the launch command
 * (the credentials stay in their private file, see `_launch.ts`), `pane.send_input` types the same
 * constant line `pane run` does, and herdr's error codes go through the one table in
 * `_command.ts`.
 *
 * @module
 */

import type { BackendDeps } from "../../lib/backend/backend.ts";
import type { Layer } from "../../lib/backend/identity.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import type { HerdrCommand } from "./_command.ts";
import {
  closeOp,
  getOp,
  type HerdrOp,
  type HerdrPane,
  listOp,
  renameOp,
  runOp,
  sendKeysOp,
  shellPidOp,
  splitOp,
  type SplitParams,
} from "./_ops.ts";
import type { UnixRequester } from "./_socket.ts";
import { createTransport, type TransportState } from "./_transport.ts";
import type { HerdrConfig } from "./_traits.ts";

/** herdr's operations for one backend. */
export interface HerdrApi {
  /** The CLI runner (binary, doctor's version text). */
  readonly cli: HerdrCommand;
  /** Where operations go, for messages. */
  target(): string;
  /**
   * Decides the transport (once; the ping runs on the first call).
   *
   * @throws {MuxError} In `socket` mode: `backend_unreachable`, `timed_out`,
   *   `unparseable_output`, `unsupported_version`; in any mode, `unsupported_version` when the
   *   server is older than the minimum.
   */
  transport(signal?: AbortSignal): Promise<TransportState>;
  /** The gated herdr version: the server's (socket) or the CLI's (`herdr --version`). */
  version(signal?: AbortSignal): Promise<string>;
  /** Splits a pane; returns the new pane's id. */
  split(params: SplitParams, signal?: AbortSignal): Promise<string>;
  /** A pane, or null when herdr does not know it. */
  get(paneId: string, signal?: AbortSignal): Promise<HerdrPane | null>;
  /** Every pane of the server. */
  list(signal?: AbortSignal): Promise<HerdrPane[]>;
  /** The pane's shell pid, when herdr tells. */
  shellPid(paneId: string, signal?: AbortSignal): Promise<number | undefined>;
  /** Types `text` and Enter into the pane (`pane run`). */
  run(paneId: string, text: string, signal?: AbortSignal): Promise<void>;
  /** Sends keys (`ctrl+c`). */
  sendKeys(paneId: string, keys: readonly string[], signal?: AbortSignal): Promise<void>;
  /** Closes the pane. */
  close(paneId: string, signal?: AbortSignal): Promise<void>;
  /** Sets the pane's label, or clears it (null). */
  rename(paneId: string, label: string | null, signal?: AbortSignal): Promise<HerdrPane>;
  /** Runs an operation described elsewhere in the backend (`_agent.ts`) the same way. */
  call<T>(op: HerdrOp<T>, signal?: AbortSignal): Promise<T>;
}

/** Options of {@linkcode createHerdrApi}. */
export interface HerdrApiOptions {
  /** The one-line socket request seam. @default `unixRequest` (lib/sys/unix_request.ts) */
  unixRequest?: UnixRequester;
}

/**
 * Creates the operations of a herdr backend.
 *
 * @param deps The backend's deps (config `herdr.transport`, runner, clock, env, log).
 * @param layer The herdr layer muxbridge runs in, if any.
 * @param options Seams.
 * @returns The operations.
 */
export function createHerdrApi(
  deps: BackendDeps<HerdrConfig>,
  layer: Layer | undefined,
  options: HerdrApiOptions = {},
): HerdrApi {
  const { cli, target, state, version, exec } = createTransport(deps, layer, options.unixRequest);
  return {
    cli,
    target,
    transport: state,
    version,
    async split(p, signal) {
      const pane = await exec(splitOp(p), signal);
      return pane.pane_id;
    },
    async get(paneId, signal) {
      try {
        return await exec(getOp(paneId), signal);
      } catch (err) {
        if (isMuxError(err, "pane_not_found")) return null;
        throw err;
      }
    },
    list: (signal) => exec(listOp(), signal),
    shellPid: (paneId, signal) => exec(shellPidOp(paneId), signal),
    run: (paneId, text, signal) => exec(runOp(paneId, text), signal),
    sendKeys: (paneId, keys, signal) => exec(sendKeysOp(paneId, keys), signal),
    close: (paneId, signal) => exec(closeOp(paneId), signal),
    rename: (paneId, label, signal) => exec(renameOp(paneId, label), signal),
    call: exec,
  };
}
