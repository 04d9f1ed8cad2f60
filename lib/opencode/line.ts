/**
 * The one seam between muxbridge and the two OpenCode release lines. Everything that differs
 * between OpenCode 1.x (npm `opencode-ai`) and 2.x (npm `@opencode/cli`) is a field of one
 * {@linkcode OpencodeLine}: which versions it covers, how its events look and decode, the routes
 * its server answers, the program a pane runs and the environment that carries the password,
 * and how muxbridge's close interrupts that program. The rest of muxbridge asks the line; it
 * never asks which line it is.
 *
 * @module
 */

import semver from "semver";
import type { DecodedEvent } from "./events.ts";
import type { Http } from "./_http.ts";
import type { LineClient } from "./client.ts";
import { V1 } from "./v1/line.ts";
import { V2 } from "./v2/line.ts";

/** A line's number: its major version. */
export type LineId = 1 | 2;

/** The password a pane's program needs (never on argv). */
export interface PaneCredentials {
  /** User name. */
  username: string;
  /** Password. */
  password: string;
}

/** What a pane for one child runs. */
export interface PaneProgramInput {
  /** `opencode_bin`. */
  bin: string;
  /** The normalised server URL. */
  url: string;
  /** The child session (validated). */
  sessionId: string;
  /** Its directory (validated). */
  dir: string;
  /** Credentials, if the server needs them. */
  auth?: PaneCredentials;
  /** muxbridge sets the pane's title: the program is told not to set its own. */
  ownsTitle: boolean;
}

/** The program a pane runs and its environment. */
export interface PaneProgram {
  /** The argv (never a secret in it). */
  argv: string[];
  /** The environment: credentials, and the line's own settings for a pane's program. */
  env: Record<string, string>;
}

/** One OpenCode release line. */
export interface OpencodeLine {
  /** Its number. */
  readonly id: LineId;
  /** The server versions muxbridge supports on this line (a semver range). */
  readonly range: string;
  /** The npm package that installs it (for hints). */
  readonly npm: string;
  /** Whether a plugin event of this shape is this line's (`{properties}` 1.x, `{data}` 2.x). */
  speaks(event: object): boolean;
  /** Decodes one of this line's events (`type` already read). */
  decode(type: string, event: unknown): DecodedEvent;
  /** The routes of this line's server, on a transport. */
  client(http: Http): LineClient;
  /** The program a child's pane runs. */
  pane(input: PaneProgramInput): PaneProgram;
  /**
   * How muxbridge's close interrupts the pane's program before it kills the pane: `key` types
   * Ctrl+C into it (1.x `attach` exits on it); `signal` sends SIGTERM to the recorded program
   * (2.x's TUI takes a typed Ctrl+C to the parent session instead of exiting).
   */
  readonly interrupt: "key" | "signal";
  /** What a user whose request was refused (401/403) should do. */
  readonly authHint: string;
}

/** Both lines, oldest first. */
export const LINES: readonly OpencodeLine[] = [V1, V2];

/**
 * A line by its number.
 *
 * @param id The number.
 * @returns The line.
 *
 * @example
 * ```ts
 * import { lineById } from "./line.ts";
 * lineById(2).interrupt; // "signal"
 * ```
 */
export function lineById(id: LineId): OpencodeLine {
  return id === 2 ? V2 : V1;
}

/** The verdict on one OpenCode version. */
export type LineVerdict =
  | { readonly supported: true; readonly version: string; readonly line: OpencodeLine }
  | { readonly supported: false; readonly version: string; readonly hint: string }
  | { readonly supported: null; readonly version: null };

/**
 * Which line a version belongs to and whether muxbridge supports it there.
 *
 * A prerelease counts as the release it leads to (`2.1.0-beta.1` is 2.x), so the version is
 * coerced before the range check; `v2.1.2` (2.x's `--version`) and `opencode v2.1.2` coerce too.
 *
 * @param version A version as a server or binary reported it; null or undefined when unknown.
 * @returns `supported: null` when the version is unknown or not semver (the caller goes on and
 *   says so); otherwise the line, or why not with a hint.
 *
 * @example
 * ```ts
 * import { lineOf } from "./line.ts";
 * const v = lineOf("opencode v2.1.2");
 * v.supported === true && v.line.id; // 2
 * lineOf("0.15.8").supported; // false
 * ```
 */
export function lineOf(version: string | null | undefined): LineVerdict {
  const coerced = version ? semver.coerce(version) : null;
  if (!version || !coerced) return { supported: null, version: null };
  const line = LINES.find((l) => semver.satisfies(coerced, l.range));
  if (line) return { supported: true, version, line };
  const newest = LINES[LINES.length - 1];
  return {
    supported: false,
    version,
    hint: coerced.major < 1
      ? `OpenCode ${version} is too old; muxbridge supports ${supportedRanges()}`
      : coerced.major > newest.id
      ? `OpenCode ${version} is newer than muxbridge knows (${supportedRanges()}); update muxbridge`
      : `OpenCode ${version} is outside the versions muxbridge supports (${supportedRanges()}); install ${
        (LINES.find((l) => l.id === coerced.major) ?? newest).npm
      }`,
  };
}

/**
 * Every supported range, for messages.
 *
 * @returns E.g. `1.x (>=1.0.0 <2.0.0) and 2.x (>=2.1.0 <3.0.0)`.
 */
export function supportedRanges(): string {
  return LINES.map((l) => `${l.id}.x (${l.range})`).join(" and ");
}

/**
 * The line whose events look like `event`.
 *
 * @param event A parsed event object.
 * @returns The line, or null for a shape neither line has.
 */
export function lineSpeaking(event: object): OpencodeLine | null {
  return LINES.find((l) => l.speaks(event)) ?? null;
}
