/**
 * Private to the provider backend: whether muxbridge can work here — `probe` (handshake, one
 * listing) and the `doctor` checks (command, handshake, list, credentials).
 *
 * @module
 */

import semver from "semver";
import type { Check, ProbeResult } from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import { describeArgv } from "../../lib/sys/exec.ts";
import type { ProviderInfo } from "./_client.ts";
import { COMMAND_HINT, type ProviderLink } from "./_link.ts";
import { PROVIDER_PROTOCOL_VERSION } from "./_traits.ts";

/**
 * `probe`: the handshake, then one listing; the provider's version read as semver where it can
 * be.
 *
 * @param link The backend's link to its provider.
 * @param signal Aborts the calls.
 * @returns The provider program and its version (`0.0.0` when it has none).
 * @throws {MuxError} `invalid_config` without `provider.command`, or the client's errors.
 */
export async function probeProvider(
  link: ProviderLink,
  signal?: AbortSignal,
): Promise<ProbeResult> {
  const provider = await link.info(signal);
  await link.list(signal);
  const v = provider.provider.version;
  return {
    binary: link.argv?.[0] ?? "",
    version: semver.valid(v) ?? semver.coerce(v)?.version ?? "0.0.0",
  };
}

/**
 * Runs the checks, stopping at the first one the rest depend on.
 *
 * @param link The backend's link to its provider.
 * @param signal Aborts the calls.
 * @returns The checks, each failure with a hint.
 */
export async function providerDoctor(link: ProviderLink, signal?: AbortSignal): Promise<Check[]> {
  const checks: Check[] = [];
  const argv = link.argv;
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
    provider = await link.info(signal);
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
    const panes = await link.list(signal);
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
      hint:
        "Give the provider capabilities.env (its spawn sets the pane's environment), or use a built-in backend",
    });
  }
  return checks;
}
