/**
 * `doctor` on OpenCode 2.x's side of the chain: is the user's background service running, which
 * version, and did it load muxbridge's plugin (`GET /api/plugin`: `active`, or `failed` with
 * OpenCode's own reason; `opencode plugin list` shows no status). The service's URL and password
 * come from its private state file, as 2.x's clients read them; doctor never starts the service.
 *
 * @module
 */

import type { Check } from "../../backend/backend.ts";
import { lineOf } from "../../opencode/line.ts";
import { readServices, serviceDir } from "../../opencode/v2/service.ts";
import { toMuxError } from "../../sys/errors.ts";
import type { CliDeps } from "./_command.ts";

const NAME = "opencode 2.x service";

/**
 * The 2.x service's checks: null when no 2.x plugin is installed (nothing to check).
 *
 * @param deps The CLI deps (env, fetch, clock).
 * @param installed Whether muxbridge's 2.x plugin folder is installed.
 * @returns The checks.
 */
export async function serviceChecks(deps: CliDeps, installed: boolean): Promise<Check[]> {
  if (!installed) return [];
  const dir = serviceDir(deps.env);
  const skipped: string[] = [];
  const services = dir ? readServices(dir, (file, why) => skipped.push(`${file}: ${why}`)) : [];
  if (services.length === 0) {
    return [{
      name: NAME,
      status: "warn",
      detail: skipped.length
        ? `no usable service record (${skipped.join("; ")})`
        : "no OpenCode 2.x service runs now",
      hint: skipped.length
        ? "The service's state file must be yours and private (0600); OpenCode writes it so"
        : "Start `opencode` (it starts the service), then run `muxbridge doctor` again",
    }];
  }
  const checks: Check[] = [];
  for (const service of services) checks.push(...await oneService(deps, service));
  return checks;
}

async function oneService(
  deps: CliDeps,
  service: { url: string; password: string; file: string },
): Promise<Check[]> {
  const headers = {
    accept: "application/json",
    authorization: `Basic ${btoa(`opencode:${service.password}`)}`,
  };
  const get = async (path: string) => {
    const res = await deps.fetch(`${service.url}${path}`, {
      headers,
      signal: AbortSignal.timeout(5000),
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`GET ${path} answered ${res.status}`);
    }
    return await res.json() as unknown;
  };
  let version: string | undefined;
  try {
    version = (await get("/api/info") as { version?: string }).version;
  } catch (err) {
    return [{
      name: NAME,
      status: "fail",
      detail: `${service.url} (from ${service.file}): ${toMuxError(err).message}`,
      hint: "Is the service running? `opencode service status`; `opencode service restart`",
    }];
  }
  const verdict = lineOf(version);
  const checks: Check[] = [{
    name: NAME,
    status: verdict.supported ? "pass" : "fail",
    detail: `${service.url} runs OpenCode ${version ?? "(no version)"}`,
    ...(verdict.supported === false ? { hint: verdict.hint } : {}),
  }];
  try {
    const list = await get("/api/plugin") as {
      data?: Array<{ id?: string; source?: { path?: string }; state?: Record<string, unknown> }>;
    };
    const ours = (list.data ?? []).filter((p) =>
      p.id === "muxbridge" || /muxbridge/.test(p.source?.path ?? "")
    );
    const failed = ours.find((p) => p.state?.status === "failed");
    const active = ours.find((p) => p.id === "muxbridge" && p.state?.status === "active");
    checks.push(
      failed
        ? {
          name: "opencode 2.x plugin loaded",
          status: "fail",
          detail: `the service refused ${failed.source?.path ?? "muxbridge"}: ${
            String(failed.state?.error ?? "no reason given")
          }`,
          hint: "Run `muxbridge install` again; the service reloads plugins within seconds",
        }
        : active
        ? { name: "opencode 2.x plugin loaded", status: "pass", detail: "muxbridge is active" }
        : {
          name: "opencode 2.x plugin loaded",
          status: "warn",
          detail: "the service does not list muxbridge yet",
          hint:
            "It reloads plugins within seconds of an install; run doctor again, else `opencode service restart`",
        },
    );
  } catch (err) {
    checks.push({
      name: "opencode 2.x plugin loaded",
      status: "warn",
      detail: `cannot list the service's plugins: ${toMuxError(err).message}`,
    });
  }
  return checks;
}
