/**
 * Checks every value before it reaches a program's argv or a pane command: session ids, pane
 * targets, directories, URLs, typed text and titles. Session titles come from a language model
 * and are hostile input.
 *
 * @module
 */

import { cut, MuxError } from "./errors.ts";

/** Control (Cc), format (Cf), line and paragraph separator (Zl, Zp) and lone surrogates (Cs). */
const UNSAFE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/u;
const UNSAFE_GLOBAL = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/** The longest pane title muxbridge sets, in code points. */
export const MAX_TITLE = 60;

/** The longest pane id or other target accepted. */
export const MAX_TARGET = 256;

/** The longest directory accepted, in UTF-16 units (PATH_MAX is 4096 bytes on Linux). */
export const MAX_DIRECTORY = 4096;

/** The contract's session id: `ses_` and 1–128 letters or digits. */
export const SESSION_ID = /^ses_[A-Za-z0-9]{1,128}$/;

/**
 * The brand of a checked id: a type-only symbol (nothing of it exists at run time), so no value
 * gets the brand without going through a check.
 */
export declare const checked: unique symbol;

/**
 * A session id checked once, where it entered (a protocol line, a CLI flag, a pane record):
 * code that receives one never checks it again. Made only by {@linkcode validateSessionId} and
 * {@linkcode isSessionId}.
 */
export type SessionId = string & { readonly [checked]: "SessionId" };

/**
 * A pane id checked once, where it entered (a multiplexer's answer, a CLI argument, a pane
 * record): safe to put on a multiplexer's argv. Made only by {@linkcode validatePaneId} (and, on
 * top of it, a backend's `checkPaneId`, `lib/backend/_pane_id.ts`, which checks its own form).
 */
export type PaneId = string & { readonly [checked]: "PaneId" };

/**
 * Tells whether text is a session id, narrowing it to {@linkcode SessionId}.
 *
 * @param text Any text.
 * @returns Whether it is `ses_` and 1–128 letters or digits.
 *
 * @example
 * ```ts
 * import { isSessionId } from "./validate.ts";
 * isSessionId("ses_abc123"); // true
 * isSessionId("ses_a b"); // false
 * ```
 */
export function isSessionId(text: string): text is SessionId {
  return SESSION_ID.test(text);
}

/**
 * Tells whether a string holds a control, format, line-separator character or lone surrogate.
 *
 * @param text Any text.
 * @returns Whether it has one.
 */
export function hasUnsafeChars(text: string): boolean {
  return UNSAFE.test(text);
}

/**
 * Checks an OpenCode session id.
 *
 * @param id The id.
 * @returns The id.
 * @throws {MuxError} `invalid_argument` unless it is `ses_` and 1–128 letters or digits.
 *
 * @example
 * ```ts
 * import { validateSessionId } from "./validate.ts";
 * validateSessionId("ses_abc123");
 * ```
 */
export function validateSessionId(id: string): SessionId {
  if (!isSessionId(id)) {
    throw new MuxError(
      "invalid_argument",
      `Cannot use session id ${JSON.stringify(cutForMessage(id))}`,
      {
        hint: 'A session id is "ses_" followed by 1-128 letters or digits',
      },
    );
  }
  return id;
}

/**
 * Checks a value passed to a multiplexer as a positional target (pane id, window, socket name):
 * not empty, no leading "-" (some CLIs have no `--`), no unsafe characters, bounded length.
 *
 * @param kind What the value is, for the message ("pane id").
 * @param value The value.
 * @returns The value.
 * @throws {MuxError} `invalid_argument` when it is unsafe.
 *
 * @example
 * ```ts
 * import { validateTarget } from "./validate.ts";
 * validateTarget("pane id", "%3");
 * ```
 */
export function validateTarget(kind: string, value: string): string {
  let problem: string | undefined;
  if (value.length === 0) problem = "it is empty";
  else if (value.startsWith("-")) problem = 'it starts with "-"';
  else if (value.length > MAX_TARGET) problem = `it is longer than ${MAX_TARGET} characters`;
  else if (UNSAFE.test(value)) problem = "it holds control or format characters";
  if (problem) {
    throw new MuxError(
      "invalid_argument",
      `Cannot use ${kind} ${JSON.stringify(cutForMessage(value))}: ${problem}`,
    );
  }
  return value;
}

/** The longest plain name (a socket or session name) accepted. */
export const MAX_PLAIN_NAME = 64;

/**
 * What a plain name is: what names a multiplexer's socket or session (`tmux -L NAME`, `zellij
 * --session NAME`, `herdr --session NAME`). Each of those programs joins the name onto a
 * directory of its own to find the socket, so a name must never be able to leave it: letters,
 * digits, `.`, `_` and `-`, starting with a letter, digit or `_` (no flag, no hidden name), at
 * most {@linkcode MAX_PLAIN_NAME} long, with no `..` in it. herdr's own rule is the same set and
 * length (docs/backends/herdr.md §5).
 */
const PLAIN_NAME = /^[A-Za-z0-9_][A-Za-z0-9._-]*$/;

/**
 * Why text is not a plain name (see {@linkcode validatePlainName}), or null when it is one.
 *
 * @param value Any text.
 * @returns The problem, in words for a message, or null.
 *
 * @example
 * ```ts
 * import { plainNameProblem } from "./validate.ts";
 * plainNameProblem("work"); // null
 * plainNameProblem("../evil/s"); // 'it holds "/"'
 * ```
 */
export function plainNameProblem(value: string): string | null {
  if (value.length === 0) return "it is empty";
  if (value.length > MAX_PLAIN_NAME) return `it is longer than ${MAX_PLAIN_NAME} characters`;
  if (value.includes("/")) return 'it holds "/"';
  if (value.includes("..")) return 'it holds ".."';
  if (!/^[A-Za-z0-9._-]*$/.test(value)) {
    return "it holds a character other than letters, digits, '.', '_' and '-'";
  }
  return PLAIN_NAME.test(value) ? null : `it starts with "${value[0]}"`;
}

/** What {@linkcode validatePlainName} tells a user to do. */
export const PLAIN_NAME_HINT =
  "A socket or session name is 1-64 letters, digits, '.', '_' or '-', starting with a letter, digit or '_', with no \"..\" in it";

/**
 * Checks a name that a multiplexer turns into a socket path (a tmux socket name, a zellij or
 * herdr session): a plain name that cannot leave the directory the program joins it onto.
 *
 * @param what What the value is and where it came from, for the message: `tmux.socket_name`,
 *   `ZELLIJ_SESSION_NAME`.
 * @param value The value.
 * @returns The value.
 * @throws {MuxError} `invalid_argument` naming `what` and the problem.
 *
 * @example
 * ```ts
 * import { validatePlainName } from "./validate.ts";
 * validatePlainName("zellij session", "work"); // "work"
 * ```
 */
export function validatePlainName(what: string, value: string): string {
  const problem = plainNameProblem(value);
  if (problem) {
    throw new MuxError(
      "invalid_argument",
      `Cannot use ${what} ${JSON.stringify(cutForMessage(value))}: ${problem}`,
      { hint: PLAIN_NAME_HINT },
    );
  }
  return value;
}

/** Every character any backend's pane ids use (tmux `%3`, zellij `terminal_3`, kitty `3`, herdr
 * `w1:p3`, cmux surface UUIDs). */
const PANE_ID_CHARS = /^[A-Za-z0-9%_:.-]+$/;

/**
 * Tells whether text can be a pane id, narrowing it to {@linkcode PaneId}: a safe target (not
 * empty, no leading "-", at most {@linkcode MAX_TARGET} long, no control or format characters),
 * as a pane record's id and any backend's id are. {@linkcode validatePaneId} checks an id typed
 * on the command line more strictly.
 *
 * @param text Any text.
 * @returns Whether it is a safe pane id.
 *
 * @example
 * ```ts
 * import { isPaneId } from "./validate.ts";
 * isPaneId("%3"); // true
 * isPaneId("-t"); // false
 * ```
 */
export function isPaneId(text: string): text is PaneId {
  return text.length > 0 && text.length <= MAX_TARGET && !text.startsWith("-") &&
    !UNSAFE.test(text);
}

/**
 * Checks a pane id given on the command line before anything is probed: a safe target
 * ({@linkcode validateTarget}) made only of characters some backend's ids use. Whether it has the
 * form of the backend in use is that backend's check.
 *
 * @param value The pane id.
 * @returns The pane id.
 * @throws {MuxError} `invalid_argument` when no backend could have such an id.
 *
 * @example
 * ```ts
 * import { validatePaneId } from "./validate.ts";
 * validatePaneId("w1:p3");
 * ```
 */
export function validatePaneId(value: string): PaneId {
  validateTarget("pane id", value);
  if (!PANE_ID_CHARS.test(value)) {
    throw new MuxError(
      "invalid_argument",
      `Cannot use pane id ${JSON.stringify(cutForMessage(value))}: no multiplexer has such ids`,
      { hint: 'A pane id has only letters, digits and "%_:.-", such as %3, 3 or w1:p3' },
    );
  }
  return value as PaneId;
}

/**
 * Checks text that will be typed into a pane or passed as free text: no control, format or
 * line-separator characters, no leading "-".
 *
 * @param kind What the text is, for the message.
 * @param text The text.
 * @returns The text.
 * @throws {MuxError} `invalid_argument` when it is unsafe.
 */
export function validateText(kind: string, text: string): string {
  if (UNSAFE.test(text)) {
    throw new MuxError(
      "invalid_argument",
      `Cannot send ${kind} ${
        JSON.stringify(cutForMessage(text))
      }: it holds control or format characters`,
    );
  }
  if (text.startsWith("-")) {
    throw new MuxError(
      "invalid_argument",
      `Cannot send ${kind} ${JSON.stringify(cutForMessage(text))}: it starts with "-"`,
    );
  }
  return text;
}

/**
 * Checks a directory a pane starts in: absolute, at most {@linkcode MAX_DIRECTORY} long, no
 * unsafe characters.
 *
 * @param dir The directory.
 * @param kind What the value is, for messages: `--dir` when it came from that flag.
 * @returns The directory.
 * @throws {MuxError} `invalid_argument` when it is relative, too long or unsafe.
 */
export function validateDirectory(dir: string, kind = "directory"): string {
  if (dir.length > MAX_DIRECTORY) {
    throw new MuxError(
      "invalid_argument",
      `Cannot use ${kind} ${
        JSON.stringify(cutForMessage(dir))
      }: it is longer than ${MAX_DIRECTORY} characters`,
    );
  }
  if (!dir.startsWith("/") && !/^[A-Za-z]:[\\/]/.test(dir)) {
    throw new MuxError(
      "invalid_argument",
      `Cannot use ${kind} ${JSON.stringify(cutForMessage(dir))}: it is not absolute`,
    );
  }
  if (UNSAFE.test(dir)) {
    throw new MuxError(
      "invalid_argument",
      `Cannot use ${kind} ${
        JSON.stringify(cutForMessage(dir))
      }: it holds control or format characters`,
    );
  }
  return dir;
}

/** A normalised server URL. */
export interface ServerUrl {
  /** The URL without query, fragment or trailing slash. */
  url: string;
}

/**
 * Normalises an OpenCode server URL once: http or https, no trailing slash. A URL that carries
 * credentials (`user:pass@`) is refused: credentials belong in the environment
 * (`OPENCODE_SERVER_PASSWORD`), where no argv, log line or pane record can show them.
 *
 * @param raw The URL as given.
 * @param kind What the value is, for messages: `--url` when it came from that flag.
 * @returns The normalised URL.
 * @throws {MuxError} `invalid_argument` when it is not an http(s) URL or carries credentials
 *   (the message never repeats them).
 *
 * @example
 * ```ts
 * import { normalizeServerUrl } from "./validate.ts";
 * normalizeServerUrl("http://127.0.0.1:4096/").url; // "http://127.0.0.1:4096"
 * ```
 */
export function normalizeServerUrl(raw: string, kind = "server URL"): ServerUrl {
  const shown = () => JSON.stringify(cutForMessage(redactUserinfo(raw)));
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new MuxError("invalid_argument", `Cannot use ${kind} ${shown()}: it is not a URL`, {
      hint: "Pass the URL OpenCode listens on, such as http://127.0.0.1:4096",
    });
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new MuxError("invalid_argument", `Cannot use ${kind} ${shown()}: not http or https`);
  }
  if (parsed.username || parsed.password) {
    throw new MuxError(
      "invalid_argument",
      `Cannot use ${kind} ${shown()}: it carries credentials (user:pass@)`,
      {
        hint:
          "Remove them from the URL and set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME) instead",
      },
    );
  }
  parsed.search = "";
  parsed.hash = "";
  const url = parsed.toString().replace(/\/+$/, "");
  if (UNSAFE.test(url)) {
    throw new MuxError("invalid_argument", `Cannot use ${kind} ${shown()}: unsafe characters`);
  }
  return { url };
}

/**
 * Tells whether text is a server URL as muxbridge records it: what
 * {@linkcode normalizeServerUrl} returns for it is the text itself.
 *
 * @param text The text.
 * @returns Whether it is a normalised http(s) URL without credentials.
 */
export function validateServerUrlText(text: string): boolean {
  try {
    return normalizeServerUrl(text).url === text;
  } catch {
    return false;
  }
}

/**
 * Cleans a session title for use as a pane title: control, format and separator characters
 * removed, at most {@linkcode MAX_TITLE} code points, no prefix.
 *
 * @param title The raw title.
 * @returns The clean title.
 *
 * @example
 * ```ts
 * import { cleanTitle } from "./validate.ts";
 * cleanTitle("fix\u001b]0;pwned\u0007 bug"); // "fix]0;pwned bug"
 * ```
 */
export function cleanTitle(title: string): string {
  return Array.from(title.replace(UNSAFE_GLOBAL, "")).slice(0, MAX_TITLE).join("");
}

/** The longest agent name kept, in code points. */
export const MAX_AGENT = 64;

/**
 * The agent a child session runs, clean: the event's `agent` field, else the name in the
 * ` (@<agent> subagent)` suffix OpenCode's task tool gives a child's title (OpenCode 1.18.33,
 * `docs/opencode.md`). Control, format and separator characters are removed, at most
 * {@linkcode MAX_AGENT} code points.
 *
 * @param title The raw session title.
 * @param agent The raw `agent` field, if any.
 * @returns The agent name, or undefined when neither says (or it is empty once cleaned).
 *
 * @example
 * ```ts
 * import { agentOf } from "./validate.ts";
 * agentOf("Map the lib folder (@explore subagent)"); // "explore"
 * agentOf("anything", "review"); // "review"
 * agentOf("a plain title"); // undefined
 * ```
 */
export function agentOf(title: string, agent?: string): string | undefined {
  const raw = agent ?? /\(@([^()]{1,200}) subagent\)\s*$/u.exec(title)?.[1];
  if (raw === undefined) return undefined;
  const clean = Array.from(raw.replace(UNSAFE_GLOBAL, "").trim()).slice(0, MAX_AGENT).join("");
  return clean === "" ? undefined : clean;
}

/**
 * Checks the variables a pane's program gets: each name a shell variable name that is not
 * `reserved` (names the multiplexer sets itself), each value free of NUL (no environment can
 * carry one).
 *
 * @param env The variables.
 * @param reserved Names the caller may not set. @default none
 * @throws {MuxError} `invalid_argument` naming the first variable that cannot be passed.
 *
 * @example
 * ```ts
 * import { validateEnv } from "./validate.ts";
 * validateEnv({ OPENCODE_SERVER_PASSWORD: "s3cret 'quoted'" }); // fine
 * // validateEnv({ "A=B": "x" }) and validateEnv({ A: "x\0y" }) throw invalid_argument
 * ```
 */
export function validateEnv(
  env: Readonly<Record<string, string>>,
  reserved: ReadonlySet<string> = new Set(),
): void {
  for (const [name, value] of Object.entries(env)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name) || reserved.has(name) || value.includes("\0")) {
      throw new MuxError("invalid_argument", `Cannot pass variable ${JSON.stringify(name)}`, {
        hint: reserved.size > 0
          ? "A variable name is letters, digits and _ and not one the multiplexer sets; a value holds no NUL"
          : "A variable name is letters, digits and _; a value holds no NUL",
      });
    }
  }
}

/**
 * Hides URL credentials in a message about a bad URL: everything up to the last "@" goes, since
 * a malformed URL gives no reliable place where the userinfo ends.
 */
function redactUserinfo(raw: string): string {
  const at = raw.lastIndexOf("@");
  return at < 0 ? raw : `…@${raw.slice(at + 1)}`;
}

function cutForMessage(value: string): string {
  return cut(value, 80);
}
