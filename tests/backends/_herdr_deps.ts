/**
 * Backend deps of the herdr unit tests (`herdr_test.ts`, `herdr_socket_test.ts`): a fake runner,
 * the real clock, config from flags, and the identity of a process inside herdr pane `w1:p1`
 * whose socket is {@linkcode SOCKET}.
 *
 * @module
 */

import type { BackendDeps } from "../../lib/backend/backend.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import type { ConfigLayer } from "../../lib/config/config.ts";
import { type FullConfig, resolveConfig } from "../helpers/config.ts";
import type { Identity } from "../../lib/backend/identity.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import type { FakeRunner } from "../fakes/fake_runner.ts";

const clock = createRealClock();

/** The socket path herdr gives the panes of {@linkcode inside}. */
export const SOCKET = "/run/user/1/herdr.sock";

/**
 * The identity of a process in herdr pane `w1:p1`.
 *
 * @param extra More fields of the herdr layer (`binPath`, `workspaceId`, …).
 * @returns The identity.
 */
export const inside = (extra: Record<string, string> = {}): Identity => ({
  backend: "herdr",
  layers: [{ backend: "herdr", paneId: "w1:p1", socket: SOCKET, ...extra }],
  harness: { name: null },
});

/**
 * Deps for a herdr backend on a fake runner.
 *
 * @param run The fake runner.
 * @param flags Config flags over `backend: "herdr"`.
 * @param options The identity (default {@linkcode inside}), the environment the backend reads
 *   (default: empty) and the logger (default: silent).
 * @returns The deps.
 */
export function deps(
  run: FakeRunner,
  flags: ConfigLayer = {},
  options: {
    identity?: Identity;
    env?: Record<string, string>;
    log?: BackendDeps<FullConfig>["log"];
  } = {},
): BackendDeps<FullConfig> {
  return {
    run: run.run,
    env: (name) => options.env?.[name],
    clock,
    config: resolveConfig({ env: () => undefined, flags: { backend: "herdr", ...flags } }),
    identity: options.identity ?? inside(),
    log: options.log ?? silentLogger,
  };
}
