/**
 * `muxbridge doctor`: checks config, backend, binaries, versions, OpenCode and the server URL,
 * each with a hint when it fails.
 *
 * @module
 */

import { findCredentials } from "../../opencode/credentials.ts";
import type { Check } from "../../backend/backend.ts";
import { failedCheck } from "../../backend/failed_check.ts";
import { detectedTitles } from "../../backend/hints.ts";
import type { Config } from "../../config/config.ts";
import { toMuxError } from "../../sys/errors.ts";
import { lineOf, supportedRanges } from "../../opencode/line.ts";
import { selectBackend } from "../../backend/select.ts";
import type { ServerUrl } from "../../sys/validate.ts";
import type { CliDeps, Command } from "./_command.ts";
import { backendDeps, loadConfig, serverClient } from "./_context.ts";
import { chainChecks } from "./_doctor_chain.ts";
import { serverPasswordCheck } from "./_doctor_password.ts";
import { urlFlag } from "./_flags.ts";

/** Runs `<opencode_bin> --version`. */
async function opencodeCheck(bin: string, deps: CliDeps): Promise<Check> {
  try {
    const r = await deps.run([bin, "--version"], { timeoutMs: 15_000, signal: deps.signal });
    const version = /\d+\.\d+\.\d+\S*/.exec(r.stdout)?.[0];
    if (r.code !== 0 || !version) {
      return {
        name: "opencode binary",
        status: "fail",
        detail: `${bin} --version exited ${r.code}`,
        hint: "Check the opencode_bin setting",
      };
    }
    // Panes run this binary: its line decides the command (1.x attach, 2.x --server).
    const verdict = lineOf(version);
    if (verdict.supported === false) {
      return {
        name: "opencode binary",
        status: "fail",
        detail: `${bin} ${version}: muxbridge supports ${supportedRanges()}`,
        hint: verdict.hint,
      };
    }
    return {
      name: "opencode binary",
      status: "pass",
      detail: verdict.supported
        ? `${bin} ${version} (OpenCode ${verdict.line.id}.x)`
        : `${bin} ${version}`,
    };
  } catch (err) {
    const e = toMuxError(err);
    return {
      name: "opencode binary",
      status: "fail",
      detail: e.message,
      hint:
        "Install OpenCode (npm install -g @opencode/cli, or opencode-ai for 1.x) or set opencode_bin",
    };
  }
}

/**
 * Which children get a pane and what each shows: `exclude`, `max_panes`, `failed_pane_hold_ms`,
 * `status_in_title` (the config already refused an invalid glob, naming the key).
 */
function controlsCheck(config: Config): Check {
  const exclude = config.exclude.length === 0
    ? "no exclude patterns"
    : `exclude ${config.exclude.map((p) => JSON.stringify(p)).join(", ")}`;
  const max = config.max_panes === undefined ? "no max_panes" : `max_panes ${config.max_panes}`;
  const hold = config.failed_pane_hold_ms === 0
    ? "failed panes close at once"
    : `failed panes held ${config.failed_pane_hold_ms} ms`;
  const marker = config.status_in_title ? "live state in titles" : "no live state in titles";
  return {
    name: "pane controls",
    status: "pass",
    detail: `${exclude}; ${max}; ${hold}; ${marker}`,
  };
}

/**
 * Probes the server the way the bridge will: health, a session lookup, auth; and whether it asks
 * for a password at all (`_doctor_password.ts`).
 */
async function serverChecks(url: ServerUrl, deps: CliDeps): Promise<Check[]> {
  const auth = findCredentials(url.url, deps.env);
  const client = serverClient(deps, url.url, auth);
  const checks: Check[] = [];
  const call = { signal: deps.signal };
  try {
    const health = await client.health(call);
    checks.push({
      name: "server health",
      status: health.healthy ? "pass" : "fail",
      detail: `${url.url} healthy=${health.healthy}${
        health.version ? ` version ${health.version}` : ""
      }`,
      ...(health.healthy ? {} : { hint: "Restart OpenCode" }),
    });
    checks.push(serverVersionCheck(health.version));
  } catch (err) {
    // A server that refused doctor's credentials (or their absence) still asks for a password.
    const password = await serverPasswordCheck(deps, url.url, "server password");
    return [
      failedCheck(
        "server health",
        err,
        "Check the URL (OpenCode with --port prints it); plain `opencode` needs no --url",
      ),
      ...(password ? [password] : []),
    ];
  }
  const password = await serverPasswordCheck(deps, url.url, "server password");
  if (password) checks.push(password);
  try {
    await client.session("ses_muxbridgeDoctorProbe", call);
    await client.statusMap(call);
    checks.push({
      name: "server session lookup",
      status: "pass",
      detail: auth ? "authenticated" : "no credentials needed",
    });
  } catch (err) {
    checks.push(failedCheck("server session lookup", err, "Check the server URL"));
  }
  return checks;
}

/** The server's version against the versions muxbridge supports, on either line. */
function serverVersionCheck(version: string | undefined): Check {
  const verdict = lineOf(version);
  if (verdict.supported === null) {
    return {
      name: "server version",
      status: "warn",
      detail: "the server did not report its version",
      hint: `muxbridge supports OpenCode ${supportedRanges()}; check \`opencode --version\``,
    };
  }
  if (verdict.supported === false) {
    return {
      name: "server version",
      status: "fail",
      detail: `OpenCode ${verdict.version}: the bridge skips every child (unsupported_version)`,
      hint: verdict.hint,
    };
  }
  return {
    name: "server version",
    status: "pass",
    detail: `OpenCode ${verdict.version} (${verdict.line.id}.x, ${verdict.line.range})`,
  };
}

/** The `doctor` command. */
export const doctorCommand: Command = {
  name: "doctor",
  summary: "Check the whole chain: multiplexer, binaries, the OpenCode plugin, the server",
  usage: "muxbridge doctor [--url URL] [--json]",
  help: [
    "Every check prints pass, warn or fail with what it found and, for a failure, what to do.",
    "Run it from the shell you start OpenCode in: it checks the multiplexer around you, the",
    "multiplexer and opencode binaries, the plugin in OpenCode's plugin folder (installed, and",
    "of this version), the muxbridge command the plugin will run (recorded by install, or on",
    "PATH), what the plugin logged about the last OpenCode run, and with --url a running",
    "server. Plain `opencode` needs no --url: the plugin serves its own endpoint.",
    "Exit 1 if any check fails.",
    "",
    "Example:",
    "  muxbridge doctor --url http://127.0.0.1:4096",
  ].join("\n"),
  flags: {
    url: { type: "string", help: "Also probe this OpenCode server (health, session lookup, auth)" },
  },
  positionals: [0, 0],
  json: true,
  async run(inv, deps) {
    // argv first: a bad --url is a usage error (exit 2), not a failed check.
    const url = typeof inv.values.url === "string" ? urlFlag(inv.values.url) : undefined;
    const checks: Check[] = [];
    let config;
    try {
      config = loadConfig(inv.global, deps);
      checks.push({
        name: "config",
        status: "pass",
        detail: `backend ${config.backend}, layout ${config.layout}`,
      });
      checks.push(controlsCheck(config));
    } catch (err) {
      checks.push(failedCheck("config", err, "Fix the config file"));
    }
    if (config) {
      const bdeps = backendDeps(config, deps);
      const layers = bdeps.identity.layers.map((l) => l.backend).join(" > ") || "none";
      checks.push({
        name: "environment",
        status: bdeps.identity.backend ? "pass" : "warn",
        detail: `multiplexer layers: ${layers}`,
        ...(bdeps.identity.backend ? {} : {
          hint: `Run inside ${detectedTitles(deps.backends)}, or set backend and its target`,
        }),
      });
      const selection = await selectBackend(bdeps, deps.backends, deps.signal);
      if (selection.ok) {
        checks.push({
          name: "backend",
          status: "pass",
          detail:
            `${selection.backend.name} ${selection.probe.version} (${selection.probe.binary})`,
        });
        checks.push(...await selection.backend.doctor(deps.signal));
        await selection.backend.dispose?.();
      } else {
        checks.push({
          name: "backend",
          status: "fail",
          detail: selection.message,
          hint: selection.hint,
        });
      }
      checks.push(await opencodeCheck(config.opencode_bin, deps));
      checks.push(...await chainChecks(deps, config));
    }
    if (url) checks.push(...await serverChecks(url, deps));
    const failed = checks.filter((c) => c.status === "fail").map((c) => c.name);
    const text =
      checks.map((c) =>
        `${c.status.toUpperCase().padEnd(4)} ${c.name}: ${c.detail}${
          c.hint && c.status !== "pass" ? `\n     hint: ${c.hint}` : ""
        }`
      ).join("\n") + "\n";
    return {
      json: { checks },
      text,
      exitCode: failed.length ? 1 : 0,
      failure: `Cannot pass every check: ${failed.join(", ")} failed; each one shows a hint`,
    };
  },
};
