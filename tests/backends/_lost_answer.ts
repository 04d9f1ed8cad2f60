/**
 * Loses the answer of the next command that creates a pane, for the backend contract's "a spawn
 * whose answer is lost leaves nothing behind": the command really runs (the multiplexer makes
 * the pane), then its caller gets junk instead of the answer (`garbage`: exit 0, unreadable
 * output) or no answer at all (`timeout`: the call times out). A seam decorator, so the real
 * tmux and kitty, the fake CLIs and the pane providers all go through the same fault.
 *
 * @module
 */

import type { Runner } from "../../lib/sys/exec.ts";
import { describeArgv } from "../../lib/sys/exec.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import type { LineProcessOpener } from "../../lib/sys/line_process.ts";
import type { UnixRequester } from "../../lib/sys/unix_request.ts";

/** How the answer is lost. */
export type LostAnswer = "garbage" | "timeout";

/** The armed fault: the next creating command loses its answer this way, then it disarms. */
export interface AnswerFault {
  /** Set by the test; cleared once a command used it. */
  next: LostAnswer | null;
}

/** A disarmed fault. */
export function answerFault(): AnswerFault {
  return { next: null };
}

/** What the multiplexer printed instead of its answer. */
export const GARBAGE = "\u0000\u001b[31m<<the answer was lost>> {{{\n";

/**
 * A runner whose next command that `creates` a pane runs for real and then loses its answer.
 *
 * @param run The real runner.
 * @param fault The fault the test arms.
 * @param creates Whether an argv (and its stdin) creates a pane.
 * @returns The runner.
 */
export function losingRunner(
  run: Runner,
  fault: AnswerFault,
  creates: (argv: readonly string[], stdin: string | undefined) => boolean,
): Runner {
  return async (argv, opts) => {
    const mode = fault.next;
    if (mode === null || !creates(argv, opts.stdin)) return await run(argv, opts);
    fault.next = null;
    await run(argv, opts);
    if (mode === "garbage") return { code: 0, stdout: GARBAGE, stderr: "" };
    throw new MuxError(
      "timed_out",
      `Cannot finish ${describeArgv(argv)}: no answer within ${opts.timeoutMs} ms`,
      { argv },
    );
  };
}

/**
 * A Unix socket requester whose next request that `creates` a pane is answered for real and
 * then lost.
 *
 * @param send The real requester.
 * @param fault The fault the test arms.
 * @param creates Whether a request line creates a pane.
 * @returns The requester.
 */
export function losingRequester(
  send: UnixRequester,
  fault: AnswerFault,
  creates: (line: string) => boolean,
): UnixRequester {
  return async (path, line, options) => {
    const mode = fault.next;
    if (mode === null || !creates(line)) return await send(path, line, options);
    fault.next = null;
    await send(path, line, options);
    return mode === "garbage"
      ? { ok: true, line: GARBAGE.trim() }
      : { ok: false, reason: "timed_out", sent: true, detail: "no answer (lost by the test)" };
  };
}

/**
 * A line-process opener (a pane provider's pipe) whose next request that `creates` a pane
 * reaches the provider for real and whose answer to it is then lost: replaced by junk
 * (`garbage`) or dropped (`timeout`: the call runs into its timeout).
 *
 * @param open The real opener.
 * @param fault The fault the test arms.
 * @param creates Whether a request line creates a pane.
 * @returns The opener.
 */
export function losingOpener(
  open: LineProcessOpener,
  fault: AnswerFault,
  creates: (line: string) => boolean,
): LineProcessOpener {
  return (argv, options) => {
    let lost: { id: unknown; mode: LostAnswer } | null = null;
    const proc = open(argv, {
      ...options,
      onItem(item) {
        if (lost && item.kind === "line") {
          let id: unknown;
          try {
            id = JSON.parse(item.line).id;
          } catch { /* not an answer */ }
          if (id === lost.id) {
            const { mode } = lost;
            lost = null;
            if (mode === "garbage") options.onItem({ ...item, line: GARBAGE.trim() });
            return;
          }
        }
        options.onItem(item);
      },
    });
    return {
      get pid() {
        return proc.pid;
      },
      exited: proc.exited,
      write(text) {
        if (fault.next !== null && creates(text)) {
          lost = { id: JSON.parse(text).id, mode: fault.next };
          fault.next = null;
        }
        return proc.write(text);
      },
      end: () => proc.end(),
      kill: (signal) => proc.kill(signal),
      stop: (clock, graceMs) => proc.stop(clock, graceMs),
    };
  };
}
