/**
 * Credentials go only to the server they were given for. A password arrives with a server URL
 * (`--url` and the environment, or a `bridge.hello`); it is bound to that URL's origin (scheme,
 * host and port), and every other origin (a stale pane record naming another server, a record
 * someone planted, a hello that moves to another server without credentials of its own) is
 * called without it.
 *
 * @module
 */

import type { Credentials } from "./credentials.ts";

/** Credentials and the one origin they may be sent to. */
export interface CredentialGrant {
  /** `scheme://host[:port]`, as `URL.origin` spells it. */
  readonly origin: string;
  /** The credentials. */
  readonly auth: Credentials;
}

/**
 * The origin of an http(s) URL (`URL.origin`: scheme, host and port; a default port is
 * omitted, so `http://h:80` and `http://h` are one origin).
 *
 * @param url The URL.
 * @returns The origin, or null when it is not an http(s) URL.
 *
 * @example
 * ```ts
 * import { originOf } from "./origin.ts";
 * originOf("http://127.0.0.1:4096/x"); // "http://127.0.0.1:4096"
 * ```
 */
export function originOf(url: string | null | undefined): string | null {
  if (!url) return null;
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.origin : null;
  } catch {
    return null;
  }
}

/**
 * Binds credentials to the origin of the URL they were given with.
 *
 * @param url The server URL the credentials came with.
 * @param auth The credentials, if any.
 * @returns The grant, or undefined without credentials or without a usable URL.
 */
export function grantFor(
  url: string | null | undefined,
  auth: Credentials | undefined,
): CredentialGrant | undefined {
  const origin = originOf(url);
  return auth && origin ? { origin, auth } : undefined;
}

/**
 * The credentials to send to `url`: the grant's, when `url` has its origin; otherwise none.
 *
 * @param url The server about to be called.
 * @param grant The credentials and their origin.
 * @returns The credentials, or undefined for any other origin.
 *
 * @example
 * ```ts
 * import { credentialsFor, grantFor } from "./origin.ts";
 * const grant = grantFor("http://127.0.0.1:4096", { username: "opencode", password: "pw" });
 * credentialsFor("http://127.0.0.1:4096", grant); // the credentials
 * credentialsFor("http://127.0.0.1:9999", grant); // undefined
 * ```
 */
export function credentialsFor(
  url: string | null | undefined,
  grant: CredentialGrant | undefined,
): Credentials | undefined {
  return grant && originOf(url) === grant.origin ? grant.auth : undefined;
}
