/**
 * The seam for long-lived programs muxbridge talks to over a pipe (a tmux control-mode client):
 * argv only (never a shell), stdin and stdout piped, stdout delivered as lines, stderr kept (cut
 * short) for the exit report. One-shot programs go through `lib/sys/exec.ts` instead.
 *
 * The seam holds no timers: the caller bounds every wait on its own clock and calls
 * {@linkcode Channel.kill} when a deadline passes. The child runs in its own process group
 * (`detached`), so a Ctrl+C typed at the terminal that reaches muxbridge does not also kill the
 * channel before muxbridge has closed its panes through it; when muxbridge dies, the child sees
 * end of input on its stdin and exits.
 *
 * `node:child_process` (argv, `shell: false`) runs under Deno and Bun alike.
 *
 * @module
 */

import { spawn as nodeSpawn } from "node:child_process";
import process from "node:process";

/** How a channel ended. */
export interface ChannelExit {
  /** The exit code, or null when killed by a signal or never started. */
  code: number | null;
  /** The signal that ended it, if any. */
  signal: string | null;
  /** The last of what it wrote to stderr (at most 4 KiB). */
  stderr: string;
  /** Why it could not start (`ENOENT`, `EACCES`…), when it never ran. */
  startError?: string;
}

/** Options of one channel. */
export interface ChannelOptions {
  /** Variables added to (or replacing in) the inherited environment. */
  env?: Readonly<Record<string, string>>;
  /** Called with every complete stdout line (without its newline), in order. */
  onLine(line: string): void;
  /** Called once when the program has exited or could not start. */
  onExit(exit: ChannelExit): void;
}

/** A running long-lived program. */
export interface Channel {
  /** Its process id (undefined when it could not start). */
  readonly pid: number | undefined;
  /**
   * Writes text to its stdin.
   *
   * @returns False when the channel has ended (nothing was written).
   */
  write(text: string): boolean;
  /** Closes its stdin (a polite request to end). */
  end(): void;
  /** Sends a signal (SIGTERM by default); ignored once it has exited. */
  kill(signal?: "SIGTERM" | "SIGKILL"): void;
}

/** Opens a channel: runs `argv[0]` with `argv.slice(1)`. */
export type ChannelOpener = (argv: readonly string[], options: ChannelOptions) => Channel;

const MAX_STDERR = 4096;

/**
 * Creates the real channel opener.
 *
 * @returns An opener over `node:child_process`.
 *
 * @example Talk to a tmux control client
 * ```ts ignore
 * import { createChannelOpener } from "./channel.ts";
 * const open = createChannelOpener();
 * const channel = open(["tmux", "-C", "attach", "-t", "$0"], {
 *   onLine: (line) => console.log(line),
 *   onExit: (exit) => console.log("ended", exit.code),
 * });
 * channel.write("display-message -p hello\n");
 * ```
 */
export function createChannelOpener(): ChannelOpener {
  return openChannel;
}

function openChannel(argv: readonly string[], options: ChannelOptions): Channel {
  if (argv.length === 0 || argv[0] === "") throw new TypeError("Cannot open an empty argv");
  const child = nodeSpawn(argv[0], argv.slice(1), {
    env: options.env ? { ...process.env, ...options.env } : process.env,
    stdio: ["pipe", "pipe", "pipe"],
    shell: false,
    detached: true,
  });
  let exited = false;
  let stderr = "";
  let partial = "";
  const decoder = new TextDecoder();
  const errDecoder = new TextDecoder();
  const finish = (exit: ChannelExit) => {
    if (exited) return;
    exited = true;
    options.onExit(exit);
  };
  child.stdout?.on("data", (chunk: Uint8Array) => {
    const text = partial + decoder.decode(chunk, { stream: true });
    const lines = text.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) options.onLine(line);
  });
  child.stderr?.on("data", (chunk: Uint8Array) => {
    stderr = (stderr + errDecoder.decode(chunk, { stream: true })).slice(-MAX_STDERR);
  });
  // A write after the program ended fails asynchronously (EPIPE); the exit report covers it.
  child.stdin?.on("error", () => {});
  child.on("error", (err: Error & { code?: string }) => {
    finish({ code: null, signal: null, stderr, startError: err.code ?? err.message });
  });
  child.on("close", (code: number | null, signal: string | null) => {
    if (partial !== "") options.onLine(partial);
    partial = "";
    finish({ code, signal, stderr });
  });
  return {
    get pid() {
      return child.pid;
    },
    write(text) {
      if (exited || !child.stdin || child.stdin.destroyed) return false;
      child.stdin.write(text);
      return true;
    },
    end() {
      child.stdin?.end();
    },
    kill(signal = "SIGTERM") {
      if (exited) return;
      try {
        child.kill(signal);
      } catch { /* already gone */ }
    },
  };
}
