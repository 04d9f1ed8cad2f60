/**
 * `muxbridge bridge`: bridge mode (NDJSON on stdin and stdout), what the OpenCode plugin runs.
 *
 * @module
 */

import {
  type Credentials,
  envCredentials,
  serviceCredentialsFor,
} from "../../opencode/credentials.ts";
import type { LineId } from "../../opencode/line.ts";
import { runBridge } from "../../bridge/bridge.ts";
import { runCleanup } from "../../session/cleanup.ts";
import { stateDir } from "../../config/config.ts";
import { createLogger, fileSink, stderrSink } from "../../sys/log.ts";
import { createPaneStore } from "../../session/pane_store.ts";
import { createPaneBell } from "../../session/pane_bell.ts";
import { ownerStamp } from "../../sys/processes.ts";
import { selectBackend } from "../../backend/select.ts";
import type { Command } from "./_command.ts";
import { backendDeps, callerPanes, loadConfig, serverClient } from "./_context.ts";
import { createClaims } from "../../session/views.ts";
import { dirFlag, urlFlag } from "./_flags.ts";

/** The `bridge` command. */
export const bridgeCommand: Command = {
  name: "bridge",
  summary: "Run bridge mode: OpenCode events in on stdin, protocol lines out on stdout",
  usage: "muxbridge bridge [--url URL] [--dir DIR]",
  help: [
    "Reads one JSON event per line on stdin and answers with JSON lines on stdout (see",
    "`muxbridge schema protocol`). Logs go to stderr or --log-file. The first line is `ready`",
    "whenever the bridge runs (with no usable multiplexer too: `backend: null` and the reason).",
    "A bridge that cannot start writes one `error` line naming the flag or config key, then",
    "`bye`, and nothing else: exit 2 for a bad flag or value, 3 for a bad config. Ends with a",
    "`bye` line on end of input, bridge.shutdown, SIGTERM, SIGINT or SIGHUP, after closing owned",
    "panes.",
    "",
    "Example:",
    `  printf '%s\\n' '{"type":"bridge.ping","id":1}' | muxbridge bridge --url http://127.0.0.1:4096`,
  ].join("\n"),
  flags: {
    url: { type: "string", help: "The OpenCode server URL (else bridge.hello)" },
    dir: { type: "string", help: "The project directory (default: the current directory)" },
  },
  positionals: [0, 0],
  json: false,
  failureOutput(error) {
    // The one start-up failure form: an `error` line, then `bye` (ready-first rule).
    return [
      { type: "error", code: error.code, message: error.message, line: null },
      { type: "bye", closed: 0 },
    ].map((m) => `${JSON.stringify(m)}\n`).join("");
  },
  async run(inv, deps) {
    // Flags, then the config, before anything else: a bridge that cannot start says so in
    // failureOutput (exit 2 or 3) instead of `ready`.
    if (typeof inv.values.url === "string") urlFlag(inv.values.url);
    const directory = typeof inv.values.dir === "string" ? dirFlag(inv.values.dir) : deps.cwd;
    const base = loadConfig(inv.global, deps);
    // So is an unsafe state directory (another user's, or writable by others): exit 3.
    const store = createPaneStore(stateDir(base, deps.env));
    const log = createLogger(base.log_level, base.log_file ? fileSink(base.log_file) : stderrSink);
    const owner = ownerStamp(deps.processes);
    const auth = envCredentials(deps.env);
    const client = (url: string, credentials?: Credentials, line?: LineId) =>
      serverClient(deps, url, credentials, line);
    const code = await runBridge({
      io: deps.bridgeIO(),
      log,
      version: deps.version,
      start: {
        ...(typeof inv.values.url === "string" ? { url: inv.values.url } : {}),
        directory,
        ...(auth ? { auth } : {}),
      },
      discover: (url, line) =>
        line === 2
          ? envCredentials(deps.env, 2) ?? serviceCredentialsFor(url, deps.env)
          : envCredentials(deps.env, line),
      resolveConfig: (hello) => hello === undefined ? base : loadConfig(inv.global, deps, hello),
      select: (config) => selectBackend({ ...backendDeps(config, deps), log }, deps.backends),
      loopDeps: (config, emit) => ({
        clock: deps.clock,
        log,
        emit,
        config,
        // bridge.hello cannot set state_dir: every loop shares the checked store.
        store,
        processes: deps.processes,
        owner,
        server: client,
        claims: createClaims(store.dir, owner),
        run: deps.run,
        bell: createPaneBell(),
      }),
      reclaim: (backend, grant, onCorrupt) =>
        runCleanup({
          store,
          backends: { [backend.name]: backend },
          processes: deps.processes,
          client: (url, credentials) => client(url, credentials),
          ...(grant ? { grant } : {}),
          serviceAuth: (server) => serviceCredentialsFor(server, deps.env),
          callerPanes: callerPanes(deps),
          clock: deps.clock,
          log,
          graceMs: base.close_grace_ms,
          survivorGraceMs: base.survivor_grace_ms,
        }, { dryRun: false, all: false, self: owner, onCorrupt }),
    });
    return { text: "", exitCode: code };
  },
};
