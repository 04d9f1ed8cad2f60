/**
 * Private to the kitty backend: interrupting a window (the Ctrl+C byte) and closing it, waiting
 * until `ls` no longer lists it.
 *
 * @module
 */

import type { BackendDeps } from "../../lib/backend/backend.ts";
import { waitFor } from "../../lib/sys/clock.ts";
import { type CredentialsFile, removeCredentialsFile } from "../../lib/sys/credentials_file.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import type { KittyCommand } from "./_command.ts";
import { findWindow, kittyWindowId } from "./_parse.ts";
import type { KittyConfig } from "./_traits.ts";
import { listWindows } from "./_windows.ts";

/**
 * Types Ctrl+C into a listed window.
 *
 * @param kitty The backend's command runner.
 * @param paneId The window id.
 * @param signal Aborts the calls.
 * @throws {MuxError} `pane_not_found` when the window is not listed, or what kitty answered.
 */
export async function interruptWindow(
  kitty: KittyCommand,
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const id = kittyWindowId(paneId);
  // send-text exits 0 and does nothing for an unknown window (§4, live 0.26.5),
  // so the window's existence is checked first.
  if (!findWindow(await listWindows(kitty, signal), id)) {
    throw new MuxError("pane_not_found", `Cannot interrupt kitty window ${id}: it is gone`);
  }
  // The ETX byte is what the keyboard's Ctrl+C types: the tty turns it into SIGINT for the
  // whole foreground process group (cooked mode), a raw-mode TUI reads it as Ctrl+C.
  // signal-child is not used: kitty 0.26.5 sends its signal to one process only, the highest
  // pid of the foreground group (kitty/child.py get_pid_for_cwd), so a wrapper script's own
  // shell would never see it. `\x03` is decoded by send-text's Python escape rules.
  await kitty.must(
    `interrupt kitty window ${id}`,
    ["send-text", `--match=id:${id}`, "\\x03"],
    signal,
  );
}

/**
 * Closes a window, removes the credentials file it was opened with, and waits (bounded by
 * `command_timeout_ms`) until kitty no longer lists it.
 *
 * @param ctx The backend's deps (clock, config), command runner, and the credentials files of
 *   the windows it opened.
 * @param paneId The window id.
 * @param signal Aborts the calls.
 * @throws {MuxError} `pane_not_found` for an unknown window, or what kitty answered.
 */
export async function closeWindow(
  ctx: {
    deps: BackendDeps<KittyConfig>;
    kitty: KittyCommand;
    credentials: Map<string, CredentialsFile>;
  },
  paneId: PaneId,
  signal?: AbortSignal,
): Promise<void> {
  const { deps, kitty } = ctx;
  const id = kittyWindowId(paneId);
  // A window whose program never ran leaves its credentials file: remove it with the window.
  const credentials = ctx.credentials.get(id);
  if (credentials) {
    ctx.credentials.delete(id);
    removeCredentialsFile(credentials);
  }
  await kitty.must(`close kitty window ${id}`, ["close-window", `--match=id:${id}`], signal);
  // Closing is deferred to kitty's next loop tick: `ls` may still list the window for a moment
  // and a second close right after still exits 0 (§5, live 0.26.5). Wait until it
  // is gone (bounded) so that one verifying look afterwards is enough, however slow `kitty @`
  // is (1-6 s per call was measured here under load). Still listed at the deadline: the
  // caller's verification reports it.
  await waitFor(deps.clock, async () => !findWindow(await listWindows(kitty, signal), id), {
    deadline: deps.clock.now() + deps.config.command_timeout_ms,
    initialIntervalMs: 20,
    maxIntervalMs: 200,
    signal,
  });
}
