/**
 * Private to the provider backend: what the client does with what a provider process sends — a
 * line on stdout (an answer, a notification, or a protocol violation) and its exit.
 *
 * @module
 */

import { cut, type ErrorCode, MuxError } from "../../lib/sys/errors.ts";
import type { LineItem } from "../../lib/sys/line_reader.ts";
import type { LineProcessExit } from "../../lib/sys/line_process.ts";
import {
  type ClientContext,
  type Connection,
  dropConnection,
  protocolViolation,
} from "./_connection.ts";
import { MAX_PROVIDER_LINE, PROVIDER_ERRORS, ProviderMessageSchema } from "./protocol.ts";

const RPC_TO_CODE: ReadonlyMap<number, ErrorCode> = new Map<number, ErrorCode>([
  [PROVIDER_ERRORS.paneNotFound, "pane_not_found"],
  [PROVIDER_ERRORS.noSpace, "no_space"],
  [PROVIDER_ERRORS.unsupported, "unsupported"],
  [PROVIDER_ERRORS.unavailable, "backend_unreachable"],
  [-32601, "unsupported"],
  [-32602, "invalid_argument"],
]);

/**
 * Reads one stdout line of a connection: an answer settles its call (an error answer fails it
 * with the code its JSON-RPC error maps to), a notification is ignored, anything else is a
 * protocol violation that ends the connection.
 *
 * @param ctx The client.
 * @param c The connection the line came on.
 * @param item The line (or why it could not be read).
 */
export function receiveItem(ctx: ClientContext, c: Connection, item: LineItem): void {
  const { clock, log, name } = ctx;
  const violation = (why: string) => protocolViolation(ctx, c, why);
  if (item.kind === "too_long") {
    return violation(`a line of ${item.bytes} bytes (the limit is ${MAX_PROVIDER_LINE})`);
  }
  if (item.kind === "bad_utf8") return violation(`line ${item.lineNo}, which is not UTF-8`);
  if (item.line.trim() === "") return;
  let json: unknown;
  try {
    json = JSON.parse(item.line);
  } catch {
    return violation(`a line that is not JSON: ${JSON.stringify(cut(item.line, 200))}`);
  }
  const parsed = ProviderMessageSchema.safeParse(json);
  if (!parsed.success) {
    return violation(`a line that is not JSON-RPC 2.0: ${JSON.stringify(cut(item.line, 200))}`);
  }
  const message = parsed.data;
  if ("method" in message) {
    log.debug(`provider ${name}: notification ${cut(message.method, 100)} ignored`);
    return;
  }
  const id = message.id;
  const pending = typeof id === "number" ? c.pending.get(id) : undefined;
  if (!pending) {
    if (typeof id === "number" && c.abandoned.delete(id)) return;
    if ("error" in message && id === null) {
      return violation(
        `an error for a request it could not read: ${cut(message.error.message, 200)}`,
      );
    }
    return violation(`an answer to id ${JSON.stringify(id)}, which no call in flight has`);
  }
  c.pending.delete(id as number);
  clock.clearTimeout(pending.timer);
  if ("error" in message) {
    const code = RPC_TO_CODE.get(message.error.code) ?? "command_failed";
    const err = new MuxError(
      code,
      `Cannot ${pending.method}: the provider answered ${message.error.code} ${
        JSON.stringify(cut(message.error.message, 300))
      }`,
    );
    if (code === "command_failed") log.warn(`provider ${name}: ${err.message}`);
    pending.reject(err);
    return;
  }
  if (!("result" in message)) {
    return violation(`an answer to id ${id} without a result`);
  }
  pending.resolve(message.result);
}

/**
 * Takes a connection's process exit: counts a failure and fails every call in flight with the
 * exit and the last stderr line (`binary_not_found` when it could not be started at all).
 *
 * @param ctx The client.
 * @param c The connection whose process ended; nothing happens when it is no longer live.
 * @param exit How it ended.
 */
export function receiveExit(ctx: ClientContext, c: Connection, exit: LineProcessExit): void {
  if (!c.live) return;
  const how = exit.startError !== undefined
    ? `could not start (${exit.startError})`
    : exit.signal !== null
    ? `was killed by ${exit.signal}`
    : `exited ${exit.code}`;
  const tail = exit.stderr.trim().split("\n").at(-1) ?? "";
  ctx.backoff.fail(`${how}${tail ? `: ${cut(tail, 300)}` : ""}`);
  const notFound = exit.startError === "ENOENT" || exit.startError === "EACCES";
  dropConnection(ctx, c, (p) =>
    new MuxError(
      notFound ? "binary_not_found" : "command_failed",
      `Cannot ${p.method}: the provider ${how}${tail ? `: ${cut(tail, 300)}` : ""}`,
      {
        hint: notFound
          ? `Check provider.command: ${JSON.stringify(ctx.name)} must be an executable program`
          : "Check the provider's stderr (muxbridge logs it at debug level)",
      },
    ));
}
