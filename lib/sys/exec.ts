/**
 * The one seam through which muxbridge runs external programs: argv only (never a shell), a
 * required timeout that kills (SIGTERM, then SIGKILL), an optional abort signal, and captured
 * output.
 *
 * A {@linkcode Runner} resolves for any exit code; each backend decides what a code means. It
 * rejects only with a {@linkcode MuxError} coded `binary_not_found`, `timed_out` or
 * `interrupted`. Under Deno it uses `Deno.Command`; under Bun (the offline release build) it
 * uses `node:child_process` with `shell: false`, which is argv-only as well.
 *
 * @module
 */

import { Buffer } from "node:buffer";
import { spawn as nodeSpawn } from "node:child_process";
import { constants } from "node:os";
import process from "node:process";
import { createRealClock } from "./clock.ts";
import { MuxError } from "./errors.ts";

/** Options of one program run. */
export interface RunOptions {
  /** Kill the program after this many milliseconds (required: nothing waits forever). */
  timeoutMs: number;
  /** Aborting kills the program and rejects with `interrupted`. */
  signal?: AbortSignal;
  /** Variables added to (or replacing in) the inherited environment. */
  env?: Readonly<Record<string, string>>;
  /** Working directory. @default the current directory */
  cwd?: string;
  /** Text written to the program's stdin, which is then closed. @default no stdin at all */
  stdin?: string;
  /** Time between SIGTERM and SIGKILL once the timeout fires. @default 500 */
  killGraceMs?: number;
  /** The most bytes kept of stdout and of stderr each; the rest is dropped. @default 8 MiB */
  maxOutputBytes?: number;
}

/** What a program did. */
export interface RunResult {
  /** Exit code; 128 + N when killed by signal N. */
  code: number;
  /** Standard output, decoded as UTF-8. */
  stdout: string;
  /** Standard error, decoded as UTF-8. */
  stderr: string;
}

/**
 * Runs `argv[0]` with arguments `argv.slice(1)`.
 *
 * @throws {MuxError} `binary_not_found`, `timed_out` or `interrupted`.
 */
export type Runner = (argv: readonly string[], opts: RunOptions) => Promise<RunResult>;

const DEFAULT_MAX_OUTPUT = 8 * 1024 * 1024;
const DEFAULT_KILL_GRACE_MS = 500;

/**
 * Creates the real runner for the current runtime.
 *
 * @returns A runner over `Deno.Command` (Deno) or `node:child_process` (Bun).
 *
 * @example Run a program
 * ```ts
 * import { createRunner } from "./exec.ts";
 * const run = createRunner();
 * const { code, stdout } = await run(["tmux", "-V"], { timeoutMs: 2000 });
 * ```
 */
export function createRunner(): Runner {
  return typeof Deno !== "undefined" && typeof Deno.Command === "function" ? runDeno : runNode;
}

function validate(argv: readonly string[], opts: RunOptions): void {
  if (argv.length === 0 || argv[0] === "") throw new TypeError("Cannot run an empty argv");
  if (!(opts.timeoutMs > 0)) {
    throw new RangeError(
      `Cannot run "${argv[0]}": timeoutMs must be positive, got ${opts.timeoutMs}`,
    );
  }
}

/** Describes a program for messages: its argv, each element JSON-quoted, cut short. */
export function describeArgv(argv: readonly string[]): string {
  const text = argv.map((a) => JSON.stringify(a)).join(" ");
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

interface Killable {
  kill(signal: "SIGTERM" | "SIGKILL"): void;
}

/**
 * Arms the timeout and the abort signal for one child. Returns the reason the child was killed
 * (if any) through `reason()`, `giveUp`, aborted when SIGKILL is sent, and `dispose()` to disarm
 * everything.
 *
 * `giveUp` ends the reading of the child's output and the writing of its input: a grandchild
 * that inherited the pipes (`sh -c "trap '' TERM; sleep 30"` forks `sleep`) keeps them open
 * after the child is killed, and waiting for it would break the timeout's promise.
 */
function arm(child: Killable, opts: RunOptions) {
  const clock = createRealClock();
  let reason: "timed_out" | "interrupted" | undefined;
  const grace = opts.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  const disposers: Array<() => void> = [];
  const giveUp = new AbortController();
  const kill = (why: "timed_out" | "interrupted") => {
    if (reason) return;
    reason = why;
    try {
      child.kill("SIGTERM");
    } catch { /* already gone */ }
    const escalate = clock.setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      giveUp.abort();
    }, grace);
    disposers.push(() => clock.clearTimeout(escalate));
  };
  // Cleared when the program ends: an `AbortSignal.timeout` cannot be cancelled, so every call
  // left a timer that woke an idle bridge `timeoutMs` later (bench/idle.ts: 7–10 wakeups in the
  // 10 s after start-up, 2 once they had fired).
  const timeout = clock.setTimeout(() => kill("timed_out"), opts.timeoutMs);
  disposers.push(() => clock.clearTimeout(timeout));
  if (opts.signal) {
    const onAbort = () => kill("interrupted");
    if (opts.signal.aborted) onAbort();
    else opts.signal.addEventListener("abort", onAbort, { once: true });
    disposers.push(() => opts.signal?.removeEventListener("abort", onAbort));
  }
  return {
    reason: () => reason,
    giveUp: giveUp.signal,
    dispose: () => disposers.forEach((d) => d()),
  };
}

function killedError(
  why: "timed_out" | "interrupted",
  argv: readonly string[],
  opts: RunOptions,
  stderr: string,
): MuxError {
  return why === "timed_out"
    ? new MuxError(
      "timed_out",
      `Cannot finish ${describeArgv(argv)}: no answer within ${opts.timeoutMs} ms, killed`,
      { argv, stderr, hint: "The program hung; check that its server is running and healthy" },
    )
    : new MuxError("interrupted", `Cannot finish ${describeArgv(argv)}: interrupted`, {
      argv,
      stderr,
    });
}

function notFound(argv: readonly string[], cause: unknown): MuxError {
  return new MuxError("binary_not_found", `Cannot run "${argv[0]}": program not found`, {
    argv,
    cause,
    hint: `Install "${argv[0]}" or put it on PATH`,
  });
}

/** Reads a stream to its end, or until `stop` aborts, keeping at most `max` bytes. */
async function collect(
  stream: ReadableStream<Uint8Array> | null,
  max: number,
  stop: AbortSignal,
): Promise<string> {
  if (!stream) return "";
  const reader = stream.getReader();
  const onStop = () => void reader.cancel().catch(() => {});
  stop.addEventListener("abort", onStop, { once: true });
  const chunks: Uint8Array[] = [];
  let kept = 0;
  try {
    while (true) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      if (kept >= max) continue;
      const take = chunk.byteLength <= max - kept ? chunk : chunk.subarray(0, max - kept);
      chunks.push(take);
      kept += take.byteLength;
    }
  } finally {
    stop.removeEventListener("abort", onStop);
  }
  const all = new Uint8Array(kept);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
}

/** Writes `text` to a stream and closes it, or gives up when `stop` aborts. */
async function feed(stream: WritableStream<Uint8Array>, text: string, stop: AbortSignal) {
  const writer = stream.getWriter();
  const onStop = () => void writer.abort().catch(() => {});
  stop.addEventListener("abort", onStop, { once: true });
  try {
    await writer.write(new TextEncoder().encode(text));
    await writer.close();
  } catch {
    /* the program closed its stdin or was killed; it read what it read */
  } finally {
    stop.removeEventListener("abort", onStop);
  }
}

const runDeno: Runner = async (argv, opts) => {
  validate(argv, opts);
  if (opts.signal?.aborted) throw killedError("interrupted", argv, opts, "");
  let child: Deno.ChildProcess;
  try {
    child = new Deno.Command(argv[0], {
      args: argv.slice(1),
      cwd: opts.cwd,
      env: opts.env ? { ...opts.env } : undefined,
      // Deno.Command inherits stdin by default: a child would eat the bridge's input.
      stdin: opts.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.PermissionDenied) {
      throw notFound(argv, err);
    }
    throw err;
  }
  const armed = arm(child, opts);
  try {
    const max = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
    // Input is written while output is read: a program that echoes (cat) stops reading its
    // stdin once its stdout pipe is full, so writing first would deadlock until the timeout.
    const [stdout, stderr, status] = await Promise.all([
      collect(child.stdout, max, armed.giveUp),
      collect(child.stderr, max, armed.giveUp),
      child.status,
      opts.stdin === undefined ? undefined : feed(child.stdin, opts.stdin, armed.giveUp),
    ]);
    const why = armed.reason();
    if (why) throw killedError(why, argv, opts, stderr);
    const code = status.signal ? 128 + signalNumber(status.signal) : status.code;
    return { code, stdout, stderr };
  } finally {
    armed.dispose();
  }
};

const runNode: Runner = (argv, opts) => {
  validate(argv, opts);
  if (opts.signal?.aborted) return Promise.reject(killedError("interrupted", argv, opts, ""));
  return new Promise<RunResult>((resolve, reject) => {
    const child = nodeSpawn(argv[0], argv.slice(1), {
      cwd: opts.cwd,
      env: opts.env ? { ...process.env, ...opts.env } : process.env,
      stdio: [opts.stdin === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      shell: false,
    });
    const max = opts.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
    const out = { stdout: [] as Uint8Array[], stderr: [] as Uint8Array[], so: 0, se: 0 };
    child.stdout?.on("data", (c: Uint8Array) => {
      if (out.so < max) (out.stdout.push(c.subarray(0, max - out.so)), out.so += c.byteLength);
    });
    child.stderr?.on("data", (c: Uint8Array) => {
      if (out.se < max) (out.stderr.push(c.subarray(0, max - out.se)), out.se += c.byteLength);
    });
    const armed = arm({ kill: (s) => child.kill(s) }, opts);
    // See arm(): a grandchild may hold the pipes open; "close" waits for them otherwise.
    armed.giveUp.addEventListener("abort", () => {
      child.stdin?.destroy();
      child.stdout?.destroy();
      child.stderr?.destroy();
    }, { once: true });
    child.on("error", (err: Error & { code?: string }) => {
      armed.dispose();
      reject(err.code === "ENOENT" || err.code === "EACCES" ? notFound(argv, err) : err);
    });
    child.on("close", (code: number | null, signal: string | null) => {
      armed.dispose();
      const decode = (parts: Uint8Array[]) => new TextDecoder().decode(Buffer.concat(parts));
      const stderr = decode(out.stderr);
      const why = armed.reason();
      if (why) return reject(killedError(why, argv, opts, stderr));
      resolve({
        code: code ?? 128 + signalNumber(signal ?? "SIGKILL"),
        stdout: decode(out.stdout),
        stderr,
      });
    });
    if (opts.stdin !== undefined) child.stdin?.end(opts.stdin);
  });
};

/** The platform's number of a signal (SIGUSR1 is 10 on Linux, 30 on macOS). */
function signalNumber(name: string): number {
  return (constants.signals as Record<string, number | undefined>)[name] ?? 1;
}
