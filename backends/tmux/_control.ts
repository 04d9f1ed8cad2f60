/**
 * Private to the tmux backend: one persistent tmux control-mode client (`tmux -C`), so a command
 * costs a write to a pipe instead of a process start (research peers.md §(c): one tmux CLI round
 * trip is 7–20 ms; measured here in `bench/pane_tmux.ts`).
 *
 * Control mode (man tmux, CONTROL MODE): commands are written to the client's stdin, one command
 * sequence per line; each command answers with a block `%begin T N F` … `%end T N F` (or
 * `%error T N F`), and notifications (`%layout-change`, `%exit`, …) come between blocks.
 * Observed live on tmux 3.3a:
 * - `a ; b` answers with two blocks; a command that fails ends the sequence with one `%error`
 *   block and the rest do not run (no block); a parse error is one `%error` block.
 * - Commands read from the client's stdin answer with flags `1`. Blocks of commands tmux runs on
 *   its own (the attach itself, hooks such as `after-split-window`) carry flags `0` and are
 *   ignored here: a failing hook no longer reads as a failed split, as it does through the CLI
 *   (which exits 1 when a hook fails).
 * - The attach's own block can arrive after the first blocks of commands written at once.
 * - Output lines are the command's raw output (the `\x1e`/`\x1f` separators of pane listings and
 *   UTF-8 arrive as sent); pane titles cannot hold a newline (tmux escapes control characters in
 *   titles a program sets), so no output line can forge an `%end` line.
 *
 * Each request is followed by a sentinel command (`display-message -p muxbridge-sync-N`); the
 * blocks before the sentinel's block are the request's answer. This keeps requests and answers
 * paired whatever number of blocks a request produced, and requests can be pipelined.
 *
 * @module
 */

import type { Channel, ChannelExit, ChannelOpener } from "../../lib/sys/channel.ts";
import { type Clock, sleep, type TimerId } from "../../lib/sys/clock.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { describeArgv } from "../../lib/sys/exec.ts";
import type { Logger } from "../../lib/sys/log.ts";

/** One answered command. */
export interface ControlBlock {
  /** tmux's command number. */
  number: string;
  /** The flags field (`1` for commands read from the client). */
  flags: string;
  /** `%end` (true) or `%error` (false). */
  ok: boolean;
  /** The output lines. */
  lines: string[];
}

/** What one line of control-mode output completed. */
export type ControlEvent =
  | { kind: "block"; block: ControlBlock }
  | { kind: "notification"; line: string }
  | { kind: "exit"; reason: string };

const BEGIN = /^%begin (\d+) (\d+) (\d+)$/;

/**
 * Reads control-mode output line by line. Pure: no I/O.
 *
 * @example
 * ```ts
 * import { ControlParser } from "./_control.ts";
 * const parser = new ControlParser();
 * parser.feed("%begin 1 2 1");
 * parser.feed("%0");
 * parser.feed("%end 1 2 1"); // { kind: "block", block: { ok: true, lines: ["%0"], … } }
 * ```
 */
export class ControlParser {
  #open: { head: string; number: string; flags: string; lines: string[] } | null = null;

  /**
   * Takes one line (without its newline).
   *
   * @param line The line.
   * @returns The event it completed, or null while a block is still open.
   */
  feed(line: string): ControlEvent | null {
    const open = this.#open;
    if (open) {
      // Only the guard with the same time, number and flags as its %begin ends the block.
      if (line === `%end ${open.head}` || line === `%error ${open.head}`) {
        this.#open = null;
        return {
          kind: "block",
          block: {
            number: open.number,
            flags: open.flags,
            ok: line.startsWith("%end"),
            lines: open.lines,
          },
        };
      }
      open.lines.push(line);
      return null;
    }
    const m = BEGIN.exec(line);
    if (m) {
      this.#open = { head: `${m[1]} ${m[2]} ${m[3]}`, number: m[2], flags: m[3], lines: [] };
      return null;
    }
    if (line === "%exit" || line.startsWith("%exit ")) {
      return { kind: "exit", reason: line.slice(6) };
    }
    return { kind: "notification", line };
  }
}

/** A request's answer: `ok` is false when a command of the sequence failed. */
export interface ControlAnswer {
  /** Every command answered `%end`. */
  ok: boolean;
  /** The output of the commands that succeeded, one `\n`-ended line each (as the CLI prints). */
  stdout: string;
  /** The text of the `%error` block, if any. */
  stderr: string;
}

/** A connected control-mode client. */
export interface ControlClient {
  /** Whether the client still runs. */
  readonly alive: boolean;
  /** The client's process id. */
  readonly pid: number | undefined;
  /**
   * Sends one command line (already in tmux's command language) and waits for its answer.
   *
   * @param line One line: commands joined by ` ; `, no newline.
   * @param signal Abandons the wait (the answer, when it comes, is dropped).
   * @returns The answer, or null when the client ended before answering (the commands may or
   *   may not have run).
   * @throws {MuxError} `timed_out` (the client is then killed: its state is unknown),
   *   `interrupted`.
   */
  request(line: string, signal?: AbortSignal): Promise<ControlAnswer | null>;
  /** Ends the client: closes its stdin, waits briefly, then kills it. Never throws. */
  close(): Promise<void>;
}

/** What {@linkcode connectControl} needs. */
export interface ControlOptions {
  /** The full argv of the client (`tmux <server flags> -C attach-session …`). */
  argv: readonly string[];
  /** The channel seam. */
  open: ChannelOpener;
  /** The clock every deadline runs on. */
  clock: Clock;
  /** The most the handshake or one request may take. */
  timeoutMs: number;
  /** Logs. */
  log: Logger;
  /** Called once when the client ends for any reason other than {@linkcode ControlClient.close}. */
  onDeath?: (why: string) => void;
}

interface Pending {
  token: string;
  blocks: ControlBlock[];
  settle(answer: ControlAnswer | null): void;
  abandoned: boolean;
}

/** The sentinel every request ends with. */
const SYNC = "muxbridge-sync-";
const SYNC_LINE = /^muxbridge-sync-\d+$/;

/**
 * Starts a control-mode client and waits until it answers a first sentinel.
 *
 * @param options The argv, seams and bounds.
 * @returns The connected client.
 * @throws {MuxError} `backend_unreachable` when it exits or cannot start before answering,
 *   `timed_out` when it does not answer within `timeoutMs` (it is then killed).
 */
export async function connectControl(options: ControlOptions): Promise<ControlClient> {
  const { clock, log } = options;
  const parser = new ControlParser();
  const pending: Pending[] = [];
  let seq = 0;
  let exit: ChannelExit | null = null;
  let closing = false;
  let reason = "";
  const exitWaiters: Array<() => void> = [];

  const fail = (why: string) => {
    if (!reason) reason = why;
    for (const p of pending.splice(0)) p.settle(null);
  };

  const onBlock = (block: ControlBlock) => {
    // Blocks of commands tmux runs by itself (attach, hooks) are not answers.
    if (block.flags !== "1") {
      log.debug(`tmux control: ignoring block ${block.number} (flags ${block.flags})`);
      return;
    }
    const head = pending[0];
    const sentinel = block.ok && block.lines.length === 1 && SYNC_LINE.test(block.lines[0]);
    if (!head) {
      log.warn(`tmux control: an answer came with no request waiting; closing the channel`);
      channel.kill();
      return;
    }
    if (!sentinel) {
      head.blocks.push(block);
      return;
    }
    if (block.lines[0] !== head.token) {
      // Answers and requests no longer pair up: nothing read from here on can be trusted.
      log.warn(`tmux control: answers out of step (${block.lines[0]} for ${head.token})`);
      fail("answers out of step");
      channel.kill();
      return;
    }
    pending.shift();
    const failed = head.blocks.find((b) => !b.ok);
    head.settle({
      ok: failed === undefined,
      stdout: head.blocks.filter((b) => b.ok).map((b) => b.lines.map((l) => `${l}\n`).join(""))
        .join(""),
      stderr: failed ? failed.lines.join("\n") : "",
    });
  };

  const channel: Channel = options.open(options.argv, {
    onLine(line) {
      const event = parser.feed(line);
      if (event?.kind === "block") onBlock(event.block);
      else if (event?.kind === "exit") {
        reason = reason || `tmux said %exit${event.reason ? ` ${event.reason}` : ""}`;
      }
    },
    onExit(e) {
      exit = e;
      const why = e.startError
        ? `cannot start: ${e.startError}`
        : reason || `exited ${e.code ?? e.signal}${e.stderr ? `: ${e.stderr.trim()}` : ""}`;
      fail(why);
      for (const resolve of exitWaiters.splice(0)) resolve();
      if (!closing) options.onDeath?.(why);
    },
  });

  const kill = () => {
    channel.kill("SIGTERM");
  };

  const request = (line: string, signal?: AbortSignal): Promise<ControlAnswer | null> => {
    if (line.includes("\n") || line.includes("\r")) {
      throw new TypeError("Cannot send a control-mode request holding a line break");
    }
    if (exit) return Promise.resolve(null);
    if (signal?.aborted) {
      return Promise.reject(new MuxError("interrupted", `Cannot finish tmux ${line}: interrupted`));
    }
    const token = `${SYNC}${++seq}`;
    return new Promise<ControlAnswer | null>((resolve, reject) => {
      let timer: TimerId | undefined;
      const entry: Pending = {
        token,
        blocks: [],
        abandoned: false,
        settle(answer) {
          cleanup();
          if (!entry.abandoned) resolve(answer);
        },
      };
      const onAbort = () => {
        entry.abandoned = true;
        cleanup();
        reject(new MuxError("interrupted", `Cannot finish tmux ${line}: interrupted`));
      };
      const cleanup = () => {
        if (timer !== undefined) clock.clearTimeout(timer);
        timer = undefined;
        signal?.removeEventListener("abort", onAbort);
      };
      timer = clock.setTimeout(() => {
        timer = undefined;
        entry.abandoned = true;
        signal?.removeEventListener("abort", onAbort);
        reason = reason || `no answer within ${options.timeoutMs} ms`;
        kill();
        reject(
          new MuxError(
            "timed_out",
            `Cannot finish tmux ${line}: no answer within ${options.timeoutMs} ms`,
            { hint: "The tmux server hung; check that it is running and healthy" },
          ),
        );
      }, options.timeoutMs);
      signal?.addEventListener("abort", onAbort, { once: true });
      pending.push(entry);
      if (!channel.write(`${line}\ndisplay-message -p ${token}\n`)) {
        pending.splice(pending.indexOf(entry), 1);
        entry.settle(null);
      }
    });
  };

  /** Resolves true once the client has exited, false after `ms` on the clock. */
  const exitWithin = async (ms: number): Promise<boolean> => {
    if (exit) return true;
    const stop = new AbortController();
    const gone = new Promise<boolean>((resolve) => exitWaiters.push(() => resolve(true)));
    const result = await Promise.race([gone, sleep(clock, ms, stop.signal).then(() => false)]);
    stop.abort();
    return result;
  };

  const close = async () => {
    closing = true;
    // End of input asks the client to exit (tmux answers `%exit`); a signal if it does not.
    if (exit) return;
    channel.end();
    if (await exitWithin(1000)) return;
    channel.kill("SIGTERM");
    if (await exitWithin(1000)) return;
    channel.kill("SIGKILL");
    await exitWithin(1000);
  };

  const client: ControlClient = {
    get alive() {
      return exit === null;
    },
    get pid() {
      return channel.pid;
    },
    request,
    close,
  };

  // The handshake: the client answers a first sentinel (its attach may complete later).
  let answer: ControlAnswer | null;
  try {
    answer = await request("display-message -p muxbridge-hello");
  } catch (err) {
    await close();
    throw err;
  }
  if (answer === null || !answer.ok) {
    const why = answer === null ? reason : answer.stderr;
    await close();
    throw new MuxError(
      "backend_unreachable",
      `Cannot start tmux control mode ${describeArgv(options.argv)}: ${why}`,
      { hint: "muxbridge falls back to one tmux process per command" },
    );
  }
  return client;
}
