/**
 * A scripted fake of the channel seam: every write is recorded, and the test (or an `answer`
 * function) decides which stdout lines come back and when the program exits.
 *
 * @module
 */

import type { Channel, ChannelExit, ChannelOpener, ChannelOptions } from "../../lib/sys/channel.ts";

/** One opened fake channel. */
export interface FakeChannel extends Channel {
  /** The argv it was opened with. */
  argv: readonly string[];
  /** Every line written to its stdin, in order. */
  written: string[];
  /** Sends stdout lines to muxbridge. */
  emit(...lines: string[]): void;
  /** Ends the program. */
  exit(exit?: Partial<ChannelExit>): void;
  /** Whether stdin was closed. */
  ended: boolean;
  /** Signals sent to it. */
  signals: string[];
}

/** The fake opener with every channel it opened. */
export interface FakeChannels {
  /** The opener to inject. */
  open: ChannelOpener;
  /** Every channel opened, in order. */
  opened: FakeChannel[];
}

/**
 * Creates a fake opener. `answer` is called for every written line and returns the stdout lines
 * to send back (asynchronously, as a pipe would); by default a tmux control client that answers
 * every command with an empty `%end` block and echoes `display-message -p WORD`.
 *
 * @param answer The scripted program.
 * @returns The opener and its channels.
 */
export function createFakeChannels(
  answer: (line: string, channel: FakeChannel) => string[] = tmuxLike(),
): FakeChannels {
  const opened: FakeChannel[] = [];
  const open: ChannelOpener = (argv, options: ChannelOptions) => {
    let exited = false;
    const ch: FakeChannel = {
      argv,
      written: [],
      ended: false,
      signals: [],
      pid: 4000 + opened.length,
      emit(...lines) {
        if (exited) return;
        for (const l of lines) options.onLine(l);
      },
      exit(e = {}) {
        if (exited) return;
        exited = true;
        options.onExit({ code: e.code ?? 0, signal: e.signal ?? null, stderr: e.stderr ?? "" });
      },
      write(text) {
        if (exited) return false;
        for (const line of text.split("\n").slice(0, -1)) {
          ch.written.push(line);
          const out = answer(line, ch);
          queueMicrotask(() => ch.emit(...out));
        }
        return true;
      },
      end() {
        ch.ended = true;
        queueMicrotask(() => ch.exit({ code: 0 }));
      },
      kill(signal = "SIGTERM") {
        ch.signals.push(signal);
        queueMicrotask(() => ch.exit({ code: null, signal }));
      },
    };
    opened.push(ch);
    return ch;
  };
  return { open, opened };
}

/**
 * A tmux-like control client script: each `;`-separated command answers one block (flags 1);
 * `display-message -p WORD` prints WORD; a command named `fail` answers `%error`; `hang` never
 * answers, nor anything after it (a hung server).
 *
 * @returns The answer function.
 */
export function tmuxLike(): (line: string) => string[] {
  let n = 100;
  let hung = false;
  return (line) => {
    const out: string[] = [];
    for (const cmd of line.split(" ; ")) {
      if (cmd === "hang") hung = true;
      if (hung) return out;
      n++;
      out.push(`%begin 1700000000 ${n} 1`);
      const m = /^display-message -p (\S+)$/.exec(cmd);
      if (m) out.push(m[1]);
      if (cmd.startsWith("fail")) {
        out.push(`failed: ${cmd}`, `%error 1700000000 ${n} 1`);
        return out;
      }
      out.push(`%end 1700000000 ${n} 1`);
    }
    return out;
  };
}
