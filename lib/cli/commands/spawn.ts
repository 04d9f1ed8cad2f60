/**
 * `muxbridge spawn`: opens one pane running the attach command and records it with owner `cli`.
 *
 * @module
 */

import { findCredentials } from "../../opencode/credentials.ts";
import { waitUntilReady } from "../../opencode/readiness.ts";
import { MuxError } from "../../sys/errors.ts";
import { cleanTitle } from "../../sys/validate.ts";
import { spawnRecorded } from "../../session/lost_spawns.ts";
import { attachingLine, holdArgv } from "../../session/pane_program.ts";
import { ownerStamp } from "../../sys/processes.ts";
import type { Command } from "./_command.ts";
import { loadConfig, openBackend, paneStore, serverClient } from "./_context.ts";
import { dirFlag, requiredFlag, sessionIdFlag, urlFlag } from "./_flags.ts";

/** The `spawn` command. */
export const spawnCommand: Command = {
  name: "spawn",
  summary: "Open a pane showing one OpenCode session",
  usage: "muxbridge spawn --session ID --url URL --dir DIR [--title T] [--json]",
  help: [
    "Opens a pane next to the current one showing the session: `opencode attach URL --session ID",
    "--dir DIR` on OpenCode 1.x, `opencode --server URL --session ID DIR` on 2.x (started by argv,",
    "never by your shell), and records it as owned by `cli`. Like the bridge, it first waits up to",
    "readiness_timeout_ms for the server to answer and know the session, and opens nothing (exit 1)",
    "when it does not. Credentials come from OPENCODE_SERVER_USERNAME/OPENCODE_SERVER_PASSWORD",
    "(1.x), OPENCODE_PASSWORD (2.x) or the 2.x service's state file, and reach the pane only",
    "through its environment. When the pane's program fails, the pane stays failed_pane_hold_ms",
    "with what it printed and its exit code, then closes. Plain output is the pane id.",
    "",
    "Example:",
    '  muxbridge spawn --session ses_abc123 --url http://127.0.0.1:4096 --dir "$PWD" --title review',
  ].join("\n"),
  flags: {
    session: { type: "string", help: "The OpenCode session id (ses_…)" },
    url: { type: "string", help: "The OpenCode server URL" },
    dir: { type: "string", help: "The session's directory (absolute)" },
    title: { type: "string", help: "The pane title (default: the session id)" },
  },
  positionals: [0, 0],
  json: true,
  async run(inv, deps) {
    const sessionId = sessionIdFlag(requiredFlag(inv.values, "session", "spawn"));
    const server = urlFlag(requiredFlag(inv.values, "url", "spawn"));
    const dir = dirFlag(requiredFlag(inv.values, "dir", "spawn"));
    const title = cleanTitle(typeof inv.values.title === "string" ? inv.values.title : sessionId);
    const config = loadConfig(inv.global, deps);
    // The state directory is checked (and created 0700) before a pane exists that it must record.
    const store = paneStore(config, deps);
    const backend = await openBackend(config, deps);
    const auth = findCredentials(server.url, deps.env);
    // A pane that cannot attach is no success: check the server as the bridge does.
    const ready = await waitUntilReady({
      client: serverClient(deps, server.url, auth),
      sessionId,
      directory: dir,
      clock: deps.clock,
      timeoutMs: config.readiness_timeout_ms,
      signal: deps.signal,
    });
    if (!ready.ok) {
      await backend.dispose?.();
      throw new MuxError(ready.reason, `Cannot open a pane for ${sessionId}: ${ready.message}`, {
        hint: ready.hint,
      });
    }
    const program = ready.line.pane({
      bin: config.opencode_bin,
      url: server.url,
      sessionId,
      dir,
      ...(auth ? { auth } : {}),
      ownsTitle: backend.capabilities.title,
    });
    if (Object.keys(program.env).length > 0 && !backend.capabilities.env) {
      await backend.dispose?.();
      throw new MuxError(
        "auth_unsupported",
        `Cannot pass the server password to a ${backend.name} pane without exposing it`,
        {
          hint:
            "Use a pane provider that promises `env`, or a built-in backend (each passes the password privately)",
        },
      );
    }
    // The pending record names this process as its owner: should it die mid-spawn, `cleanup`
    // closes the pane the spawn made once this process is gone.
    const spawned = await spawnRecorded(backend, {
      sessionId,
      title,
      // A failed attach stays visible for failed_pane_hold_ms, then its pane closes by itself.
      argv: holdArgv(program.argv, {
        holdMs: config.failed_pane_hold_ms,
        ownsTitle: backend.capabilities.title,
        banner: attachingLine(title, sessionId, server.url),
      }),
      cwd: dir,
      env: program.env,
      owner: "cli",
      signal: deps.signal,
    }, {
      sessionId,
      title,
      openedAt: new Date(deps.clock.now()).toISOString(),
      owner: ownerStamp(deps.processes),
      server: server.url,
      directory: dir,
      ...(ready.line.id === 1 ? {} : { opencode: ready.line.id }),
    }, {
      store,
      clock: deps.clock,
      processes: deps.processes,
      graceMs: config.close_grace_ms,
      survivorGraceMs: config.survivor_grace_ms,
      log: deps.log,
    });
    if (!spawned.ok) {
      await backend.dispose?.();
      throw spawned.error;
    }
    const { pane, pending, instance } = spawned;
    // The stamp lets a later close or cleanup tell this program from a reuse of its pid.
    const pidStart = pane.pid !== undefined ? deps.processes.startTime(pane.pid) : undefined;
    store.put({
      sessionId,
      paneId: pane.paneId,
      backend: backend.name,
      title,
      openedAt: new Date(deps.clock.now()).toISOString(),
      owner: "cli",
      server: server.url,
      directory: dir,
      ...(ready.line.id === 1 ? {} : { opencode: ready.line.id }),
      ...(pane.pid !== undefined ? { pid: pane.pid } : {}),
      ...(pidStart !== undefined ? { pidStart } : {}),
      // What a later close or cleanup proves the pane by (lib/session/pane_proof.ts).
      token: pending.token,
      ...(instance ? { instance } : {}),
    });
    store.remove(backend.name, pending.paneId);
    await backend.dispose?.();
    return {
      json: { paneId: pane.paneId, backend: backend.name, sessionId },
      text: `${pane.paneId}\n`,
    };
  },
};
