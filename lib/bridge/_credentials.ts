/**
 * The credentials a bridge holds, and which server each may go to: the environment's are bound
 * to `--url`'s origin (or, without `--url`, to the first `bridge.hello`'s), a hello's `auth` to
 * that hello's `serverUrl`. A hello that names another server without `auth` of its own gets no
 * credentials: the ones held stay bound to their origin and are never sent elsewhere.
 *
 * @module
 */

import type { Credentials } from "../opencode/credentials.ts";
import { type CredentialGrant, grantFor, originOf } from "../opencode/origin.ts";
import type { Logger } from "../sys/log.ts";

/** What a bridge holds. */
export interface HeldCredentials {
  /** Credentials and the one origin they may go to. */
  grant?: CredentialGrant;
  /** The environment's credentials while no server URL has bound them (no `--url` yet). */
  unbound?: Credentials;
}

/**
 * The credentials at start-up.
 *
 * @param url The normalised `--url`, or null.
 * @param env The environment's credentials.
 * @returns What the bridge holds.
 */
export function startCredentials(
  url: string | null,
  env: Credentials | undefined,
): HeldCredentials {
  if (!env) return {};
  const grant = grantFor(url, env);
  return grant ? { grant } : { unbound: env };
}

/**
 * The credentials after a `bridge.hello` naming `url`: its own `auth`, else what the bridge
 * found for that server itself (`discovered`: a 2.x service's password, which follows the
 * service's restarts), else the environment's if still unbound (bound to `url` now), else what
 * was held (usable only for its own origin).
 *
 * @param held What the bridge holds.
 * @param auth The hello's `auth`.
 * @param url The hello's normalised server URL.
 * @param log Told when held credentials are withheld from another origin.
 * @param discovered Credentials found for `url` itself (kept as given, not copied).
 * @returns What the bridge holds from now on.
 */
export function helloCredentials(
  held: HeldCredentials,
  auth: { username?: string; password: string } | undefined,
  url: string,
  log: Logger,
  discovered?: Credentials,
): HeldCredentials {
  if (auth) {
    const grant = grantFor(url, { username: auth.username ?? "opencode", password: auth.password });
    return grant ? { grant } : {};
  }
  if (discovered) {
    const grant = grantFor(url, discovered);
    return grant ? { grant } : {};
  }
  if (held.unbound) {
    const grant = grantFor(url, held.unbound);
    return grant ? { grant } : held;
  }
  if (held.grant && held.grant.origin !== originOf(url)) {
    log.warn(
      `bridge.hello names ${originOf(url)} without auth: the credentials given for ` +
        `${held.grant.origin} are not sent to it`,
    );
  }
  return held;
}
