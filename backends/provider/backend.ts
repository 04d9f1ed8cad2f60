/**
 * The pane-provider backend: every pane operation is a JSON-RPC call to one long-lived provider
 * program (`provider.command`), so a terminal or multiplexer muxbridge has no code for can host
 * its panes by implementing `docs/provider-protocol.md`. What the backend can do is what the
 * provider's `initialize` answer says.
 *
 * muxbridge keeps its own rules on the provider's answers: every id passes the pane-id check
 * before it is sent, credentials go only to a provider that promises an environment
 * (`capabilities.env`), a spawn counts only once the provider's `list` shows the pane it named
 * (a spawn answered with a pane `list` never shows fails, and the pane it made is found by its
 * spawn token and closed), and the shared close procedure verifies every close by `list`.
 *
 * @module
 */

import { checkProgramArgv } from "../../lib/backend/_program_argv.ts";
import semver from "semver";
import denoConfig from "../../deno.json" with { type: "json" };
import { checkPaneId } from "../../lib/backend/_pane_id.ts";
import type {
  Backend,
  BackendDeps,
  Capabilities,
  Check,
  LayoutRequest,
  LayoutResult,
  PaneInfo,
  ProbeResult,
  SpawnedPane,
  SpawnRequest,
} from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { describeArgv } from "../../lib/sys/exec.ts";
import { createLineProcessOpener, type LineProcessOpener } from "../../lib/sys/line_process.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateTarget,
} from "../../lib/sys/validate.ts";
import { createProviderClient, type ProviderClient, type ProviderInfo } from "./_client.ts";
import { PROVIDER_PANE_ID, type ProviderResult } from "./protocol.ts";
import { PROVIDER_PROTOCOL_VERSION, type ProviderConfig } from "./_traits.ts";

/** Seams and bounds of {@linkcode createProviderBackend}, for tests. */
export interface ProviderBackendOptions {
  /** The line-process seam. @default `createLineProcessOpener()` */
  open?: LineProcessOpener;
  /** The first restart delay after a failure (doubles per failure in a row). @default 200 */
  backoffMs?: number;
  /** The longest restart delay. @default 5000 */
  maxBackoffMs?: number;
}

const NONE: Capabilities = {
  layout: false,
  title: false,
  env: false,
  marks: false,
  focusSafe: false,
  spawnToken: false,
};

const COMMAND_HINT =
  'Set provider.command to the provider program and its arguments, such as ["/path/to/provider"] (docs/provider-protocol.md)';

/** Makes a provider pane id, from an answer or before one is sent: the protocol's form only. */
function providerPaneId(paneId: string): PaneId {
  return checkPaneId(
    paneId,
    PROVIDER_PANE_ID,
    "A provider pane id is 1-256 of A-Z a-z 0-9 % _ : . - (docs/provider-protocol.md)",
  );
}

function toInfo(pane: ProviderResult<"list">["panes"][number]): PaneInfo {
  const info: PaneInfo = { paneId: providerPaneId(pane.paneId), dead: !pane.alive };
  if (pane.pid !== undefined) info.pid = pane.pid;
  if (pane.title !== undefined) info.title = pane.title;
  return info;
}

/**
 * Creates the provider backend. The provider starts with the first call (`probe`).
 *
 * @param deps Clock, log, config (`provider.command`, `command_timeout_ms`).
 * @param options Seams and restart bounds.
 * @returns The backend; `dispose()` stops the provider.
 *
 * @example
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { ProviderConfig } from "./_traits.ts";
 * import { createProviderBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<ProviderConfig>): Promise<void> {
 *   // deps.config.provider.command is the provider program, such as ["./provider"]
 *   const backend = createProviderBackend(deps);
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
 *   await backend.dispose?.();
 * }
 * ```
 */
export function createProviderBackend(
  deps: BackendDeps<ProviderConfig>,
  options: ProviderBackendOptions = {},
): Backend {
  const argv = deps.config.provider.command;
  let client: ProviderClient | undefined;
  let known: ProviderInfo | undefined;

  const rpc = (): ProviderClient => {
    if (!argv) {
      throw new MuxError(
        "invalid_config",
        "Cannot use the provider backend: provider.command is not set",
        {
          hint: COMMAND_HINT,
        },
      );
    }
    client ??= createProviderClient({
      argv: argv.map((a, i) => i === 0 ? validateTarget("provider program", a) : a),
      open: options.open ?? createLineProcessOpener(),
      clock: deps.clock,
      log: deps.log,
      timeoutMs: deps.config.command_timeout_ms,
      version: denoConfig.version,
      ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
      ...(options.maxBackoffMs !== undefined ? { maxBackoffMs: options.maxBackoffMs } : {}),
    });
    return client;
  };

  const info = async (signal?: AbortSignal): Promise<ProviderInfo> => {
    known = await rpc().info(signal);
    return known;
  };

  const capabilities = (): Capabilities => known ? { ...known.capabilities, marks: false } : NONE;

  const list = async (signal?: AbortSignal) => (await rpc().call("list", {}, signal)).panes;

  const spawn = async (req: SpawnRequest): Promise<SpawnedPane> => {
    const sessionId = req.sessionId;
    validateTarget("owner", req.owner);
    const cwd = validateDirectory(req.cwd);
    const title = cleanTitle(req.title);
    checkProgramArgv(req.argv);
    const provider = await info(req.signal);
    if (Object.keys(req.env).length > 0 && !provider.capabilities.env) {
      // Refused, not dropped: a pane without its credentials would fail to attach (contract).
      throw new MuxError(
        "auth_unsupported",
        `Cannot pass credentials to a pane of provider ${provider.provider.name}: it has no way to set a pane's environment (capabilities.env is false)`,
        { hint: "Run OpenCode without a server password, or use a provider or backend with env" },
      );
    }
    const { paneId, pid } = await rpc().call("spawn", {
      argv: [...req.argv],
      cwd,
      env: { ...req.env },
      title,
      anchor: provider.selfPaneId ?? null,
      sessionId,
      ...(req.token !== undefined ? { token: req.token } : {}),
    }, req.signal);
    // The protocol: spawn answers once the pane is listed. A pane whose program ended at once
    // may already be gone again (the watch reports it), but a listed pane that carries this
    // spawn's token under another id means the answer named the wrong pane: failing here lets
    // the token find the pane that was really made and close it.
    const panes = await list(req.signal);
    if (!panes.some((p) => p.paneId === paneId)) {
      const made = req.token === undefined ? undefined : panes.find((p) => p.token === req.token);
      if (made) {
        const message = `Cannot use pane ${
          JSON.stringify(paneId)
        }: the provider answered spawn with it, but its list shows no such pane and pane ${
          JSON.stringify(made.paneId)
        } carries the spawn's token`;
        deps.log.error(`provider ${provider.provider.name}: ${message}`);
        throw new MuxError("unparseable_output", message, {
          hint: "Fix the provider: spawn answers with the id list shows for the new pane",
        });
      }
      deps.log.debug(
        `provider: pane ${paneId} is not listed right after its spawn (ended at once?)`,
      );
    }
    const id = providerPaneId(paneId);
    return pid === undefined ? { paneId: id } : { paneId: id, pid };
  };

  const inspect = async (paneId: PaneId, signal?: AbortSignal): Promise<PaneInfo | null> => {
    const id = providerPaneId(paneId);
    const pane = (await list(signal)).find((p) => p.paneId === id);
    return pane ? toInfo(pane) : null;
  };

  const findSpawned = async (token: string, signal?: AbortSignal): Promise<PaneInfo[]> => {
    if (!(await info(signal)).capabilities.spawnToken) return [];
    return (await list(signal)).filter((p) => p.token === token).map(toInfo);
  };

  const setTitle = async (paneId: PaneId, title: string, signal?: AbortSignal) => {
    const id = providerPaneId(paneId);
    const provider = await info(signal);
    if (!provider.capabilities.title) {
      // An unknown pane is still "not found", as on every backend.
      if (!(await list(signal)).some((p) => p.paneId === id)) {
        throw new MuxError(
          "pane_not_found",
          `Cannot title pane ${id}: the provider does not list it`,
        );
      }
      throw new MuxError(
        "unsupported",
        `Cannot title pane ${id}: provider ${provider.provider.name} has no titles`,
      );
    }
    await rpc().call("setTitle", { paneId: id, title: cleanTitle(title) }, signal);
  };

  const applyLayout = async (req: LayoutRequest, signal?: AbortSignal): Promise<LayoutResult> => {
    const provider = await info(signal);
    if (!provider.capabilities.layout) {
      return {
        applied: false,
        detail:
          `provider ${provider.provider.name} arranges no panes (capabilities.layout is false)`,
      };
    }
    return await rpc().call("layout", {
      layout: req.layout,
      mainPaneSize: req.mainPaneSize,
      panes: req.panes.map(providerPaneId),
    }, signal);
  };

  const probe = async (signal?: AbortSignal): Promise<ProbeResult> => {
    const provider = await info(signal);
    await list(signal);
    const v = provider.provider.version;
    return {
      binary: argv?.[0] ?? "",
      version: semver.valid(v) ?? semver.coerce(v)?.version ?? "0.0.0",
    };
  };

  const doctor = async (signal?: AbortSignal): Promise<Check[]> => {
    const checks: Check[] = [];
    if (!argv) {
      return [{
        name: "provider command",
        status: "fail",
        detail: "provider.command is not set",
        hint: COMMAND_HINT,
      }];
    }
    checks.push({ name: "provider command", status: "pass", detail: describeArgv(argv) });
    let provider: ProviderInfo;
    try {
      provider = await info(signal);
    } catch (err) {
      checks.push(failedCheck("provider handshake", err, COMMAND_HINT));
      return checks;
    }
    const caps = Object.entries(provider.capabilities).filter(([, on]) => on).map(([k]) => k);
    checks.push({
      name: "provider handshake",
      status: "pass",
      detail:
        `${provider.provider.name} ${provider.provider.version}, protocol ${PROVIDER_PROTOCOL_VERSION}, capabilities: ${
          caps.join(", ") || "none"
        }${provider.selfPaneId ? `, muxbridge runs in pane ${provider.selfPaneId}` : ""}`,
    });
    try {
      const panes = await list(signal);
      checks.push({ name: "provider list", status: "pass", detail: `${panes.length} panes` });
    } catch (err) {
      checks.push(failedCheck("provider list", err));
    }
    if (!provider.capabilities.env) {
      checks.push({
        name: "provider credentials",
        status: "warn",
        detail:
          "the provider cannot set a pane's environment: a password-protected server gets no panes",
        hint: "Run OpenCode without a server password, or use a provider with capabilities.env",
      });
    }
    return checks;
  };

  return {
    name: "provider",
    get capabilities() {
      return capabilities();
    },
    probe,
    spawn,
    inspect,
    // A provider keeps no marks muxbridge could read: ownership lives in the state records.
    listOwned: () => Promise.resolve([]),
    findSpawned,
    interrupt: async (paneId, signal) => {
      await rpc().call("interrupt", { paneId: providerPaneId(paneId) }, signal);
    },
    kill: async (paneId, signal) => {
      await rpc().call("close", { paneId: providerPaneId(paneId) }, signal);
    },
    setTitle,
    applyLayout,
    doctor,
    async dispose() {
      await client?.stop();
    },
  };
}
