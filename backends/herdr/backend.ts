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
 * How commands reach herdr (`herdr/_api.ts`): by default (`herdr.transport: auto`) over herdr's
 * API socket, one connection per request and no process, when the socket answers `ping` with a
 * protocol muxbridge speaks; else, and after the socket fails, one `herdr` process per command.
 * Both ways send the same values: the launch command in the pane's environment, the same constant
 * typed line, the credentials in their private file.
 *
 * What herdr cannot do: no hidden per-pane data (labels are shown), so ownership survives a
 * crash through muxbridge's durable records (`marks` false); no layout rebalancing API for a
 * subset of panes, so `applyLayout` is an honest no-op and the layout picks split directions.
 *
 * @module
 */

import type {
  Backend,
  BackendDeps,
  Capabilities,
  Check,
  ProbeResult,
  SpawnedPane,
  SpawnRequest,
} from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { describeArgv } from "../../lib/sys/exec.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateTarget,
  validateText,
} from "../../lib/sys/validate.ts";
import type { UnixRequester } from "../../lib/sys/unix_request.ts";
import { createAgentReporter } from "./_agent.ts";
import { createHerdrApi } from "./_api.ts";
import { herdrError } from "./_command.ts";
import {
  type CredentialsFile,
  removeCredentialsFile,
  writeCredentialsFile,
} from "../../lib/sys/credentials_file.ts";
import { LAUNCH_LINE, LAUNCH_VAR, launchCommand } from "./_launch.ts";
import { herdrPaneId } from "./_parse.ts";
import { findSpawnedPanes, inspectPane, paneShellPid } from "./_inspect.ts";
import { anchorPane, applyHerdrLayout, placePane } from "./_place.ts";
import { setPaneStatus, setPaneTitle } from "./_title.ts";
import { ENVIRON_READABLE, processEnviron } from "../../lib/sys/processes.ts";
import {
  HERDR_CAPABILITIES,
  HERDR_DOCTOR,
  HERDR_MIN_VERSION,
  type HerdrConfig,
} from "./_traits.ts";
import { SPAWN_TOKEN_VAR, tokenMarker } from "../../lib/backend/spawn_token.ts";

/** The token, checked (tokenMarker throws for anything else). */
const checkToken = (token: string) => (tokenMarker(token), token);

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

/** Variables herdr manages itself (a caller's `--env` cannot override them, docs/backends/herdr.md §4). */
const RESERVED_ENV = new Set([
  "HERDR_ENV",
  "HERDR_SOCKET_PATH",
  "HERDR_BIN_PATH",
  "HERDR_WORKSPACE_ID",
  "HERDR_TAB_ID",
  "HERDR_PANE_ID",
  LAUNCH_VAR,
  SPAWN_TOKEN_VAR,
]);

/** Checks every name and value of a pane's variables. */
function checkEnv(env: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || RESERVED_ENV.has(name) || value.includes("\0")) {
      throw new MuxError("invalid_argument", `Cannot pass variable ${JSON.stringify(name)}`, {
        hint:
          "A variable name is letters, digits and _ and not one herdr sets; a value holds no NUL",
      });
    }
  }
}

const ANCHOR_HINT =
  "Run muxbridge inside the herdr pane it should open panes next to (HERDR_PANE_ID)";

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
  const herdr = api.cli;
  const version = api.version;
  /** Panes this backend opened, oldest first: later splits stack beside the newest. */
  const opened: string[] = [];
  /** Credentials files not yet read by their pane's shell, by pane: removed when it closes. */
  const envFiles = new Map<string, CredentialsFile>();
  let spawnQueue: Promise<unknown> = Promise.resolve();

  const anchor = (): PaneId | undefined => anchorPane(deps.config.herdr, layer);
  const listPanes = (signal?: AbortSignal) => api.list(signal);

  const doSpawn = async (req: SpawnRequest): Promise<SpawnedPane> => {
    validateTarget("owner", req.owner);
    const cwd = validateDirectory(req.cwd);
    const title = cleanTitle(req.title);
    if (req.argv.length === 0 || req.argv[0] === "" || req.argv.some((a) => a.includes("\0"))) {
      throw new MuxError("invalid_argument", `Cannot run ${describeArgv(req.argv)} in a pane`, {
        hint: "The pane command needs a program and no NUL characters",
      });
    }
    checkEnv(req.env);
    const line = validateText("pane command", LAUNCH_LINE);
    await version(req.signal);
    const { target, direction } = await placePane({
      layout: deps.config.layout,
      opened,
      list: listPanes,
      anchor,
    }, req.signal);
    const envFile = Object.keys(req.env).length > 0 ? writeCredentialsFile(req.env) : undefined;
    let paneId: PaneId;
    try {
      // Only the command travels in the pane's environment, on either transport: the
      // credentials stay in their private file (see herdr/_launch.ts).
      paneId = herdrPaneId(
        await api.split({
          ...(target === undefined ? {} : { target }),
          direction,
          cwd,
          env: {
            [LAUNCH_VAR]: launchCommand(req.argv, envFile),
            // In the shell's environment from the split on, and the program's after `exec`.
            ...(req.token === undefined ? {} : { [SPAWN_TOKEN_VAR]: checkToken(req.token) }),
          },
        }, req.signal),
      );
    } catch (err) {
      if (envFile) removeCredentialsFile(envFile);
      throw err;
    }
    if (envFile) envFiles.set(paneId, envFile);
    const pid = await paneShellPid(api, deps.log, paneId, req.signal);
    try {
      await api.run(paneId, line, req.signal);
    } catch (err) {
      // A shell pane without the program would stay forever: close it.
      await api.close(paneId).catch(() => {});
      forgetEnvFile(paneId);
      throw err;
    }
    opened.push(paneId);
    if (title !== "") {
      try {
        await setPaneTitle(api, paneId, title, req.signal);
      } catch (err) {
        deps.log.warn(`herdr: cannot title pane ${paneId}: ${(err as Error).message}`);
      }
    }
    if (req.status !== undefined && req.status.state !== "unknown") {
      // The pane is open either way: a report that fails now goes again at the next change.
      await agents.report(paneId, req.status, req.signal).catch((err) =>
        deps.log.debug(`herdr: cannot report the agent of ${paneId}: ${(err as Error).message}`)
      );
    }
    return pid === undefined ? { paneId } : { paneId, pid };
  };

  /** Removes a pane's credentials file, if its shell has not already. */
  const forgetEnvFile = (paneId: string) => {
    const envFile = envFiles.get(paneId);
    if (!envFile) return;
    envFiles.delete(paneId);
    removeCredentialsFile(envFile);
  };

  const spawn = (req: SpawnRequest): Promise<SpawnedPane> => {
    // One at a time: concurrent splits of the same pane land on top of each other (OMOS #762).
    const run = spawnQueue.then(() => doSpawn(req));
    spawnQueue = run.catch(() => {});
    return run;
  };

  const probe = async (signal?: AbortSignal): Promise<ProbeResult> => {
    const v = await version(signal);
    await listPanes(signal);
    const { transport } = await api.transport(signal);
    return { binary: transport === "socket" ? api.target() : herdr.bin, version: v };
  };

  const doctor = async (signal?: AbortSignal): Promise<Check[]> => {
    const checks: Check[] = [];
    const skip = (why: string) => {
      for (const name of HERDR_DOCTOR.slice(1)) {
        if (!checks.some((c) => c.name === name)) {
          checks.push({ name, status: "fail", detail: `not checked: ${why}` });
        }
      }
      return checks;
    };
    // The transport first (one ping): over the socket, the binary is only the fallback's.
    const state = await api.transport(signal).catch((err) => err as Error);
    const viaSocket = !(state instanceof Error) && state.transport === "socket";
    const raw = await herdr.version(signal).catch((err) => err as Error);
    if (raw instanceof Error || raw.code !== 0) {
      const err = raw instanceof Error ? raw : herdrError("read the herdr version", raw);
      if (!viaSocket) {
        checks.push(failedCheck("herdr binary", err));
        return skip(raw instanceof Error ? "no herdr binary" : "herdr --version failed");
      }
      checks.push({
        ...failedCheck("herdr binary", err),
        status: "warn",
        detail: `${err.message} (needed only if herdr's socket fails)`,
      });
    } else {
      checks.push({
        name: "herdr binary",
        status: "pass",
        detail: `${herdr.bin}: ${raw.stdout.trim()}`,
      });
    }
    if (state instanceof Error) {
      checks.push(failedCheck("herdr transport", state));
      return skip("herdr's socket is unusable");
    }
    checks.push(
      state.fellBack
        ? {
          name: "herdr transport",
          status: "warn",
          detail: state.detail,
          hint:
            "muxbridge works through the herdr CLI; set herdr.transport to cli if this is expected",
        }
        : { name: "herdr transport", status: "pass", detail: state.detail },
    );
    try {
      const v = await version(signal);
      checks.push({
        name: "herdr version",
        status: "pass",
        detail: `${v} >= ${HERDR_MIN_VERSION}`,
      });
    } catch (err) {
      checks.push(failedCheck("herdr version", err));
      return skip("unsupported herdr version");
    }
    try {
      const panes = await listPanes(signal);
      checks.push({
        name: "herdr server",
        status: "pass",
        detail: `the server on ${api.target()} answers with ${panes.length} panes`,
      });
    } catch (err) {
      checks.push(failedCheck("herdr server", err));
      return skip("no herdr server");
    }
    const a = anchor();
    if (a === undefined) {
      checks.push({
        name: "herdr anchor",
        status: "warn",
        detail: "muxbridge does not run in a pane of this server: panes split the focused pane",
        hint: ANCHOR_HINT,
      });
    } else {
      try {
        const found = await inspectPane(api, a, signal);
        checks.push(
          found ? { name: "herdr anchor", status: "pass", detail: `panes open next to ${a}` } : {
            name: "herdr anchor",
            status: "fail",
            detail: `herdr does not know pane ${a}`,
            hint: ANCHOR_HINT,
          },
        );
      } catch (err) {
        checks.push(failedCheck("herdr anchor", err, ANCHOR_HINT));
      }
    }
    return checks;
  };

  return {
    name: "herdr",
    capabilities,
    probe,
    spawn,
    inspect: (paneId, signal) => inspectPane(api, paneId, signal),
    listOwned: () => Promise.resolve([]),
    findSpawned: (token, signal) =>
      findSpawnedPanes({ api, log: deps.log, environ, capabilities }, token, signal),
    async interrupt(paneId, signal) {
      const id = herdrPaneId(paneId);
      // Silent on success (docs/backends/herdr.md §7); an unknown pane is a pane_not_found error
      // line.
      await api.sendKeys(id, ["ctrl+c"], signal);
    },
    async kill(paneId, signal) {
      const id = herdrPaneId(paneId);
      forgetEnvFile(id);
      await api.close(id, signal);
    },
    setTitle: (paneId, title, signal) => setPaneTitle(api, paneId, title, signal),
    setStatus: (paneId, status, signal) => setPaneStatus(api, agents, paneId, status, signal),
    releaseStatus(paneId, sessionId, signal) {
      return agents.release(herdrPaneId(paneId), sessionId, signal);
    },
    applyLayout: (req) => applyHerdrLayout(deps.log, req),
    doctor,
  };
}
