/**
 * `muxbridge cleanup`: closes owned panes left behind by a bridge that is gone.
 *
 * @module
 */

import { envCredentials, serviceCredentialsFor } from "../../opencode/credentials.ts";
import type { Backend } from "../../backend/backend.ts";
import { runCleanup } from "../../session/cleanup.ts";
import { selectBackend } from "../../backend/select.ts";
import type { Command } from "./_command.ts";
import { grantFor } from "../../opencode/origin.ts";
import { MuxError } from "../../sys/errors.ts";
import { normalizeServerUrl } from "../../sys/validate.ts";
import { backendDeps, callerPanes, loadConfig, paneStore, serverClient } from "./_context.ts";

/** The `cleanup` command. */
export const cleanupCommand: Command = {
  name: "cleanup",
  summary: "Close panes left behind by a bridge that is gone",
  usage: "muxbridge cleanup [--dry-run] [--all] [--url URL] [--json]",
  help: [
    "For every owned pane whose owner process is dead: closes it when its session is deleted,",
    "idle, or its server does not answer; keeps it while the session is busy. Panes of a running",
    "bridge are never touched; panes from `muxbridge spawn` only with --all. Only recorded panes",
    "are closed (multiplexer marks alone are not ownership), never the pane cleanup runs in, and",
    "only while the live pane is provably the recorded one (the same multiplexer instance, the",
    "recorded program): otherwise the pane is left alone and its record retired, with the reason.",
    "OPENCODE_SERVER_PASSWORD is sent only to the server --url names; records of any other",
    "server are checked without it.",
    "",
    "Example:",
    "  muxbridge cleanup --dry-run --json",
  ].join("\n"),
  flags: {
    "dry-run": { type: "boolean", help: "Report what would be closed, close nothing" },
    all: { type: "boolean", help: "Include panes opened by `muxbridge spawn`" },
    url: {
      type: "string",
      help: "The server OPENCODE_SERVER_PASSWORD belongs to (without it, no password is sent)",
    },
  },
  positionals: [0, 0],
  json: true,
  async run(inv, deps) {
    let url: string | undefined;
    if (typeof inv.values.url === "string") {
      try {
        url = normalizeServerUrl(inv.values.url).url;
      } catch (err) {
        throw new MuxError("usage", (err as Error).message, { hint: (err as MuxError).hint });
      }
    }
    const config = loadConfig(inv.global, deps);
    const store = paneStore(config, deps);
    const wanted = new Set<string>(store.list().records.map((r) => r.backend));
    const backends: Partial<Record<string, Backend>> = {};
    const bdeps = backendDeps(config, deps);
    if (bdeps.identity.backend) wanted.add(bdeps.identity.backend);
    for (const name of wanted) {
      const selection = await selectBackend(
        { ...bdeps, config: { ...config, backend: name } },
        deps.backends,
        deps.signal,
      );
      if (selection.ok) backends[name] = selection.backend;
      else deps.log.warn(`cleanup cannot use ${name}: ${selection.message}`);
    }
    const grant = grantFor(url, envCredentials(deps.env));
    const report = await runCleanup({
      store,
      backends,
      processes: deps.processes,
      client: (server, auth) => serverClient(deps, server, auth),
      ...(grant ? { grant } : {}),
      serviceAuth: (server) => serviceCredentialsFor(server, deps.env),
      callerPanes: callerPanes(deps),
      clock: deps.clock,
      log: deps.log,
      graceMs: config.close_grace_ms,
      survivorGraceMs: config.survivor_grace_ms,
    }, { dryRun: inv.values["dry-run"] === true, all: inv.values.all === true });
    for (const b of Object.values(backends)) await b?.dispose?.();
    const verb = inv.values["dry-run"] ? "would close" : "closed";
    const lines = [
      ...report.closed.map((e) => `${verb} ${e.backend} ${e.paneId} (${e.sessionId}): ${e.reason}`),
      ...report.kept.map((e) => `kept ${e.backend} ${e.paneId} (${e.sessionId}): ${e.reason}`),
      ...report.retired.map((e) =>
        `${
          inv.values["dry-run"] ? "would retire" : "retired"
        } ${e.backend} ${e.paneId} (${e.sessionId}), left alone: ${e.reason}`
      ),
    ];
    return { json: report, text: lines.length ? `${lines.join("\n")}\n` : "nothing to clean up\n" };
  },
};
