/**
 * Private to the tmux backend: the anchor (the pane muxbridge opens panes next to) and the last
 * listing of its session.
 *
 * Every call that changes panes ends with a listing of the anchor's session (see `_open.ts`),
 * kept here, so the next open or layout decides without a call of its own. A decision made on a
 * listing that is no longer true is refused by tmux (a guard in the same call), never acted on.
 *
 * @module
 */

import type { BackendDeps } from "../../lib/backend/backend.ts";
import type { TmuxConfig } from "./_traits.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { validateTarget } from "../../lib/sys/validate.ts";
import { type TmuxCommand, tmuxError } from "./_command.ts";
import { sessionListing } from "./_open.ts";
import { PANE_FORMAT, PANE_ID, parsePaneRows } from "./_parse.ts";
import type { SessionView } from "./_place.ts";

/** What to do when the anchor cannot be found. */
export const ANCHOR_HINT =
  "Run muxbridge in the tmux pane it should open panes next to, or set tmux.target to a live pane";

/** The anchor and the last listing of its session. */
export interface Anchor {
  /**
   * The anchor as configured: `tmux.target`, else `$TMUX_PANE` when muxbridge talks to the
   * server it runs inside (a pane id of another server would name an unrelated pane).
   *
   * @throws {MuxError} `no_backend` when there is none; `invalid_argument` for an unsafe one.
   */
  ref(): string;
  /** The anchor's pane id; a window or session target resolves to its active pane, once. */
  resolve(signal?: AbortSignal): Promise<string>;
  /** The anchor's pane id when it is known without asking tmux, else undefined. */
  known(): string | undefined;
  /** The last listing, when it is of `anchor`'s session. */
  cached(anchor: string): SessionView | undefined;
  /**
   * Keeps the listing a call ended with (undefined: it did not run, so forget the last one).
   *
   * @returns The listing read, or undefined when it holds no row of the anchor.
   */
  absorb(anchor: string, listing: string | undefined): SessionView | undefined;
  /**
   * Lists the anchor's session now (one call) and keeps the listing.
   *
   * @throws {MuxError} `pane_not_found` (with a hint) when the anchor is gone.
   */
  list(signal?: AbortSignal): Promise<SessionView>;
}

/**
 * Creates the anchor of a tmux backend.
 *
 * @param deps The backend's deps (config, identity).
 * @param tmux The backend's command runner.
 * @returns The anchor.
 */
export function createAnchor(deps: BackendDeps<TmuxConfig>, tmux: TmuxCommand): Anchor {
  const layer = deps.identity.layers.find((l) => l.backend === "tmux");
  let resolved: { ref: string; paneId: string } | undefined;
  let view: SessionView | undefined;

  const ref = (): string => {
    const { target, socket_name, socket_path } = deps.config.tmux;
    if (target) return validateTarget("tmux.target", target);
    const sameServer = !socket_name && (!socket_path || socket_path === layer?.socket);
    if (layer?.paneId && sameServer) return validateTarget("TMUX_PANE", layer.paneId);
    throw new MuxError("no_backend", "Cannot place panes: no tmux pane to open them next to", {
      hint: layer?.paneId
        ? "Set tmux.target to a pane of the server tmux.socket_name/socket_path names"
        : "Run inside tmux or set tmux.target",
    });
  };

  const resolve = async (signal?: AbortSignal): Promise<string> => {
    const r = ref();
    if (PANE_ID.test(r)) return r;
    if (resolved?.ref === r) return resolved.paneId;
    const result = await tmux.run([["list-panes", "-t", r, "-F", PANE_FORMAT]], signal);
    const err = result.code === 0 ? undefined : tmuxError(`use tmux.target "${r}"`, result);
    if (err && err.code !== "pane_not_found") throw err;
    const rows = err ? [] : parsePaneRows(result.stdout);
    const pane = rows.find((row) => row.active) ?? rows[0];
    if (!pane) {
      throw new MuxError("pane_not_found", `Cannot find tmux.target "${r}"`, {
        cause: err,
        hint: ANCHOR_HINT,
      });
    }
    resolved = { ref: r, paneId: pane.paneId };
    return pane.paneId;
  };

  const absorb = (anchor: string, listing: string | undefined): SessionView | undefined => {
    const rows = listing === undefined ? [] : parsePaneRows(listing);
    const anchorRow = rows.find((r) => r.paneId === anchor);
    view = anchorRow ? { anchor, rows, anchorRow } : undefined;
    return view;
  };

  return {
    ref,
    resolve,
    known() {
      try {
        const r = ref();
        if (PANE_ID.test(r)) return r;
        return resolved?.ref === r ? resolved.paneId : undefined;
      } catch {
        return undefined;
      }
    },
    cached: (anchor) => (view?.anchor === anchor ? view : undefined),
    absorb,
    async list(signal) {
      const anchor = await resolve(signal);
      const result = await tmux.run([sessionListing(anchor)], signal);
      const err = result.code === 0 ? undefined : tmuxError(`use anchor "${anchor}"`, result);
      if (err && err.code !== "pane_not_found") throw err;
      const listed = absorb(anchor, err ? undefined : result.stdout);
      if (!listed) {
        resolved = undefined;
        throw new MuxError("pane_not_found", `Cannot find anchor pane "${anchor}"`, {
          cause: err,
          hint: ANCHOR_HINT,
        });
      }
      return listed;
    },
  };
}
