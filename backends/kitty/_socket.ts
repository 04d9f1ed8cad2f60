/**
 * Private to the kitty backend: kitty's remote-control protocol spoken over its Unix socket, so
 * that a call costs a socket round trip instead of starting `kitty @` (on kitty 0.26.5 a Python
 * start-up: 0.3–0.5 s of CPU per call, measured here; docs/backends/kitty.md §10).
 *
 * The protocol (https://sw.kovidgoyal.net/kitty/rc_protocol/): the client writes
 * `ESC P @kitty-cmd <JSON> ESC \`, the JSON being `{"cmd", "version", "no_response",
 * "payload"}`; kitty answers in the same framing with `{"ok": true, "data"}` or `{"ok": false,
 * "error", "tb"}`. The payload's fields are the command's options, as `kitty @` sends them.
 *
 * Only the argv shapes the backend builds are translated ({@linkcode kittyMessage}); anything
 * else, an address that is not a Unix socket path, and a socket nothing listens on go to
 * `kitty @` as before, which also words what is wrong.
 *
 * @module
 */

import { z } from "zod";
import type { CommandRun } from "../../lib/backend/_run_command.ts";
import type { Clock } from "../../lib/sys/clock.ts";
import { cut, MuxError } from "../../lib/sys/errors.ts";
import type { UnixRequester } from "../../lib/sys/unix_request.ts";

/** What starts a message and an answer. */
const PREFIX = "\x1bP@kitty-cmd";
/** What ends them (ESC \). */
export const KITTY_END = "\x1b\\";

/** One remote-control command, as sent on the socket. */
export interface KittyMessage {
  /** The command's name (`launch`, `ls`…). */
  cmd: string;
  /** Its payload: the options `kitty @` would send. */
  payload: Record<string, unknown>;
  /** Whether kitty answers it (`send-text` never does). */
  answer: boolean;
}

/** Options and positional arguments of one argv, split. */
interface Split {
  options: Map<string, string[]>;
  flags: Set<string>;
  positional: string[];
}

const OPTION = /^--([a-z][a-z-]*)(?:=(.*))?$/s;

/** Splits `--name=value`, `--flag`, then positional arguments (all of them after `--`). */
function split(args: readonly string[]): Split {
  const out: Split = { options: new Map(), flags: new Set(), positional: [] };
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") {
      out.positional.push(...args.slice(i + 1));
      return out;
    }
    const m = OPTION.exec(arg);
    if (!m) {
      out.positional.push(...args.slice(i));
      return out;
    }
    if (m[2] === undefined) out.flags.add(m[1]);
    else out.options.set(m[1], [...(out.options.get(m[1]) ?? []), m[2]]);
  }
  return out;
}

/** Whether `s` uses no option or flag outside the ones named. */
function only(s: Split, options: readonly string[], flags: readonly string[] = []): boolean {
  return [...s.options.keys()].every((k) => options.includes(k)) &&
    [...s.flags].every((f) => flags.includes(f));
}

/** The one value of a single-valued option, if given. */
function one(s: Split, name: string): string | undefined {
  const values = s.options.get(name);
  return values === undefined ? undefined : values.at(-1);
}

/** `\xHH` escapes only, as send-text's argument: the bytes they spell. */
const HEX_ESCAPES = /^(?:\\x[0-9a-fA-F]{2})+$/;

/**
 * Translates a `kitty @` argv (after `--to <address>`) into the message `kitty @` would send, for
 * the shapes the backend builds: `ls`, `launch`, `close-window`, `send-text` of `\xHH` escapes,
 * `set-window-title`, `focus-window` and `goto-layout`, each with the options the backend uses.
 *
 * @param args The subcommand and its arguments.
 * @returns The message, or `undefined` for anything else (it runs through `kitty @`).
 *
 * @example
 * ```ts
 * import { kittyMessage } from "./_socket.ts";
 * kittyMessage(["close-window", "--match=id:3"]);
 * // { cmd: "close-window", payload: { match: "id:3" }, answer: true }
 * ```
 */
export function kittyMessage(args: readonly string[]): KittyMessage | undefined {
  const [cmd, ...rest] = args;
  const s = split(rest);
  if (cmd === undefined) return undefined;
  const match = one(s, "match");
  const withMatch = (payload: Record<string, unknown>) =>
    match === undefined ? payload : { ...payload, match };
  switch (cmd) {
    case "ls":
      return rest.length === 0 ? { cmd, payload: {}, answer: true } : undefined;
    case "close-window":
    case "focus-window":
      if (!only(s, ["match"]) || s.positional.length > 0 || match === undefined) return undefined;
      return { cmd, payload: { match }, answer: true };
    case "goto-layout":
      if (!only(s, ["match"]) || s.positional.length !== 1) return undefined;
      return { cmd, payload: withMatch({ layout: s.positional[0] }), answer: true };
    case "set-window-title": {
      if (!only(s, ["match"]) || match === undefined) return undefined;
      // As `kitty @` does (0.26.5 rc/set_window_title.py): the words joined, no title at all
      // when empty (the program's own title comes back), `self` set.
      const title = s.positional.join(" ");
      return {
        cmd,
        payload: { match, temporary: false, self: true, ...(title === "" ? {} : { title }) },
        answer: true,
      };
    }
    case "send-text": {
      const [text] = s.positional;
      if (!only(s, ["match"]) || match === undefined || s.positional.length !== 1) return undefined;
      if (!HEX_ESCAPES.test(text)) return undefined;
      const decoded = text.split("\\x").slice(1).map((h) => String.fromCharCode(parseInt(h, 16)));
      return { cmd, payload: { match, data: `text:${decoded.join("")}` }, answer: false };
    }
    case "launch": {
      const single = ["type", "match", "next-to", "location", "title", "cwd"];
      if (!only(s, [...single, "var", "env"], ["keep-focus"])) return undefined;
      if (single.some((k) => (s.options.get(k)?.length ?? 0) > 1)) return undefined;
      const payload: Record<string, unknown> = { args: s.positional };
      const keys: Record<string, string> = {
        type: "type",
        match: "match",
        "next-to": "next_to",
        location: "location",
        title: "window_title",
        cwd: "cwd",
      };
      for (const [option, key] of Object.entries(keys)) {
        const value = one(s, option);
        if (value !== undefined) payload[key] = value;
      }
      if (s.flags.has("keep-focus")) payload.keep_focus = true;
      if (s.options.has("env")) payload.env = s.options.get("env");
      if (s.options.has("var")) payload.var = s.options.get("var");
      return { cmd, payload, answer: true };
    }
    default:
      return undefined;
  }
}

/**
 * The socket path of a `unix:/path` address; `undefined` for any other (`unix:@name` abstract
 * sockets, `tcp:`, `fd:`), which go through `kitty @`.
 *
 * @param address The remote-control address.
 * @returns The absolute path, or `undefined`.
 */
export function kittySocketPath(address: string): string | undefined {
  return /^unix:\//.test(address) ? address.slice("unix:".length) : undefined;
}

/**
 * Frames a message for kitty.
 *
 * @param message The message.
 * @param version The kitty version it is for, `major.minor.patch` (kitty refuses a newer one).
 * @returns The text to write, without the end marker.
 */
export function encodeKittyMessage(message: KittyMessage, version: string): string {
  const v = version.split(".").map((n) => Number(n));
  const body = {
    cmd: message.cmd,
    version: [v[0] ?? 0, v[1] ?? 0, v[2] ?? 0],
    no_response: !message.answer,
    payload: message.payload,
  };
  // JSON escapes every control character: the end marker cannot occur inside.
  return `${PREFIX}${JSON.stringify(body)}`;
}

const ANSWER = z.object({
  ok: z.boolean(),
  data: z.unknown().optional(),
  error: z.string().optional(),
  tb: z.string().optional(),
});

/**
 * Reads kitty's answer as `kitty @` would print it: exit 0 with the data on stdout, or exit 1
 * with the traceback and the error on stderr.
 *
 * @param text The answer without its end marker.
 * @param argv The argv messages show.
 * @returns The run.
 * @throws {MuxError} `unparseable_output` for anything that is not a kitty answer.
 */
export function decodeKittyAnswer(text: string, argv: readonly string[]): CommandRun {
  let parsed: z.infer<typeof ANSWER> | undefined;
  if (text.startsWith(PREFIX)) {
    try {
      const result = ANSWER.safeParse(JSON.parse(text.slice(PREFIX.length)));
      if (result.success) parsed = result.data;
    } catch {
      // Reported below.
    }
  }
  if (parsed === undefined) {
    throw new MuxError(
      "unparseable_output",
      `Cannot read kitty's answer to ${argv.join(" ")}: unparseable output ${
        JSON.stringify(cut(text, 200))
      }`,
      { argv },
    );
  }
  if (!parsed.ok) {
    const error = parsed.error ?? "kitty refused the command";
    return { code: 1, stdout: "", stderr: `${parsed.tb ? `${parsed.tb}\n` : ""}${error}\n`, argv };
  }
  const data = parsed.data;
  const stdout = data === undefined || data === null
    ? ""
    : `${typeof data === "string" ? data : JSON.stringify(data)}\n`;
  return { code: 0, stdout, stderr: "", argv };
}

/** Options of {@linkcode kittySocketRun}. */
export interface KittySocketRunOptions {
  /** The bound of the whole request. */
  timeoutMs: number;
  /** Aborts the request. */
  signal?: AbortSignal;
  /** The clock the bound runs on. */
  clock: Clock;
  /** The argv messages show (the `kitty @` call this stands for). */
  shown: readonly string[];
}

/**
 * Sends one message on kitty's socket.
 *
 * @param send The socket seam.
 * @param path The socket path.
 * @param message The message.
 * @param version The kitty version ({@linkcode encodeKittyMessage}).
 * @param options Bound, signal, clock, the argv shown.
 * @returns The run as `kitty @` would have ended, or `undefined` when the socket could not be
 *   reached (nothing was sent: `kitty @` may run instead).
 * @throws {MuxError} `timed_out` when kitty got the message and did not answer in time,
 *   `backend_unreachable` when it closed the connection first, `unparseable_output` for an
 *   answer that is not one, `interrupted` on abort.
 */
export async function kittySocketRun(
  send: UnixRequester,
  path: string,
  message: KittyMessage,
  version: string,
  options: KittySocketRunOptions,
): Promise<CommandRun | undefined> {
  const { shown } = options;
  const reply = await send(path, encodeKittyMessage(message, version), {
    timeoutMs: options.timeoutMs,
    clock: options.clock,
    end: KITTY_END,
    answer: message.answer,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (reply.ok) {
    return message.answer
      ? decodeKittyAnswer(reply.line, shown)
      : { code: 0, stdout: "", stderr: "", argv: shown };
  }
  if (!reply.sent) return undefined;
  const action = shown.join(" ");
  if (reply.reason === "timed_out") {
    throw new MuxError("timed_out", `Cannot finish ${action}: ${reply.detail}`, { argv: shown });
  }
  throw new MuxError(
    "backend_unreachable",
    `Cannot finish ${action}: kitty's socket ${path}: ${reply.detail}`,
    { argv: shown, hint: "Check that kitty is still running" },
  );
}
