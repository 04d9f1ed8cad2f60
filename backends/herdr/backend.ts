/**
 * The herdr backend (herdr >= 0.8.2): one pane per child session split off the pane muxbridge
 * runs in (later ones stacked beside the first, so the user's pane is split once), the attach
 * command started through the pane's environment (see `herdr/_launch.ts`), credentials through a
 * private file the launch command reads and removes (never herdr's argv), every target and text
 * validated before exec (herdr has no `--`).
 *
 * herdr cannot be installed here: this backend is verified against the fake CLI in
 * `tests/fakes/bin/herdr`, built from `docs/backends/herdr.md` ("§N": the herdr 0.8.2 source and
 * sneat-dev/wb's live-captured 0.9.x fixtures), never against a real herdr.
 *
 * The minimum, 0.8.2: public ids `w1:p1` since 0.7.0, JSON `server_not_running` errors since
 * 0.8.0, and 0.8.2 is the release whose source was read (protocol 20) with every command used
 * here: `pane split <id> --direction --cwd --env --no-focus`, `pane run`, `pane rename`, `pane
 * send-keys`, `pane close`, `pane get`, `pane list`, `pane process-info`. sneat-dev/wb pins
 * 0.9.1 only because its fixtures were captured there; the peer plugin claims >= 0.8.0 without
 * checking. Preview builds sort before their release (`0.8.2-preview.…` is refused).
 *
 * How commands reach herdr (`herdr/_api.ts`, `herdr/_transport.ts`): by default
 * (`herdr.transport: auto`) over herdr's API socket, one connection per request and no process,
 * when the socket answers `ping` with a protocol muxbridge speaks; else, and after the socket
 * fails, one `herdr` process per command. Both ways send the same values: the launch command in
 * the pane's environment, the same constant typed line, the credentials in their private file.
 *
 * What herdr cannot do: no hidden per-pane data (labels are shown), so ownership survives a
 * crash through muxbridge's durable records (`marks` false); no layout rebalancing API for a
 * subset of panes, so `applyLayout` is an honest no-op and the layout picks split directions.
 *
 * @module
 */

import type { Backend, BackendDeps, Capabilities } from "../../lib/backend/backend.ts";
import { ENVIRON_READABLE, processEnviron } from "../../lib/sys/processes.ts";
import type { UnixRequester } from "../../lib/sys/unix_request.ts";
import type { PaneId } from "../../lib/sys/validate.ts";
import { createAgentReporter } from "./_agent.ts";
import { createHerdrApi } from "./_api.ts";
import { interruptPane, killPane } from "./_close.ts";
import { herdrDoctor, probeHerdr } from "./_doctor.ts";
import { findSpawnedPanes, inspectPane } from "./_inspect.ts";
import { herdrPaneId } from "./_parse.ts";
import { anchorPane, applyHerdrLayout } from "./_place.ts";
import { createSpawnState, spawnPane } from "./_spawn.ts";
import { setPaneStatus, setPaneTitle } from "./_title.ts";
import { paneProgram, serverInstance } from "./_identity.ts";
import { HERDR_CAPABILITIES, HERDR_OWNERSHIP, type HerdrConfig } from "./_traits.ts";

/** Seams of {@linkcode createHerdrBackend}, for tests. */
export interface HerdrBackendOptions {
  /** The one-line Unix socket request. @default `unixRequest` (lib/sys/unix_request.ts) */
  unixRequest?: UnixRequester;
  /**
   * Reads a pane process's environment, where a lost spawn's token is found (herdr's pane
   * listing shows no per-pane data muxbridge could set at creation).
   * @default `processEnviron` (lib/sys/processes.ts; Linux only)
   */
  environ?: (pid: number) => Readonly<Record<string, string>> | undefined;
}

/**
 * Creates the herdr backend.
 *
 * @param deps Runner, env, clock, config (`herdr`, `layout`, `command_timeout_ms`), identity.
 * @param options Seams for tests (the socket request).
 * @returns The backend.
 *
 * @example Open a pane next to the pane muxbridge runs in
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { HerdrConfig } from "./_traits.ts";
 * import { createHerdrBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<HerdrConfig>): Promise<void> {
 *   const backend = createHerdrBackend(deps);
 *   await backend.probe();
 *   const { paneId } = await backend.spawn({
 *     sessionId: validateSessionId("ses_1"),
 *     title: "fix",
 *     argv: ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_1"],
 *     cwd: "/home/me/project",
 *     env: {},
 *     owner: "cli",
 *   });
 *   await backend.kill(paneId);
 * }
 * ```
 */
export function createHerdrBackend(
  deps: BackendDeps<HerdrConfig>,
  options: HerdrBackendOptions = {},
): Backend {
  const layer = deps.identity.layers.find((l) => l.backend === "herdr");
  const api = createHerdrApi(deps, layer, options);
  const agents = createAgentReporter(api, deps);
  const environ = options.environ ?? processEnviron;
  const capabilities: Capabilities = {
    ...HERDR_CAPABILITIES,
    spawnToken: options.environ !== undefined || ENVIRON_READABLE,
  };
  const anchor = (): PaneId | undefined => anchorPane(deps.config.herdr, layer);
  const spawns = createSpawnState();

  return {
    name: "herdr",
    capabilities,
    probe: (signal) => probeHerdr(api, signal),
    spawn: (req) => spawnPane({ deps, api, agents, anchor, state: spawns }, req),
    ownership: HERDR_OWNERSHIP,
    inspect: (paneId, signal) => inspectPane(api, paneId, signal),
    instance: () => Promise.resolve(serverInstance(deps, layer)),
    paneProgram: (paneId, signal) => paneProgram({ api, log: deps.log, environ }, paneId, signal),
    listOwned: () => Promise.resolve([]),
    findSpawned: (token, signal) =>
      findSpawnedPanes({ api, log: deps.log, environ, capabilities }, token, signal),
    interrupt: (paneId, signal) => interruptPane(api, paneId, signal),
    kill: (paneId, signal) => killPane(api, spawns.envFiles, paneId, signal),
    setTitle: (paneId, title, signal) => setPaneTitle(api, paneId, title, signal),
    setStatus: (paneId, status, signal) => setPaneStatus(api, agents, paneId, status, signal),
    releaseStatus: (paneId, sessionId, signal) =>
      agents.release(herdrPaneId(paneId), sessionId, signal),
    applyLayout: (req) => applyHerdrLayout(deps.log, req),
    doctor: (signal) => herdrDoctor({ api, anchor }, signal),
  };
}
