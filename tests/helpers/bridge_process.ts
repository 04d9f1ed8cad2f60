/**
 * Runs the real muxbridge entry point as a child process (bridge mode or a CLI command) with an
 * isolated environment, stdin piped and stdout parsed line by line.
 *
 * @module
 */

import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { runTag } from "./run_tag.ts";

/**
 * The command that runs muxbridge: `MUXBRIDGE_TEST_BIN` (a compiled binary, e.g.
 * `dist/muxbridge` from `deno task build:bun`) or `deno run main.ts`. Every black-box test
 * (bridge and CLI) starts muxbridge through this, so `deno task test:binary` runs them all
 * against the binary.
 *
 * @returns The argv prefix; append the muxbridge command and its flags.
 * @throws {Error} When `MUXBRIDGE_TEST_BIN` names no executable file: a test run that silently
 * fell back to `main.ts` would prove nothing about the binary.
 */
export function muxbridgeArgv(): string[] {
  const bin = Deno.env.get("MUXBRIDGE_TEST_BIN");
  if (bin) {
    // Relative to the directory the tests were started from; absolute so that a test that
    // runs muxbridge with another cwd still finds it.
    const path = bin.startsWith("/") ? bin : `${Deno.cwd()}/${bin}`;
    let info: Deno.FileInfo;
    try {
      info = Deno.statSync(path);
    } catch {
      throw new Error(`MUXBRIDGE_TEST_BIN="${bin}": no such file (build it: deno task build:bun)`);
    }
    if (!info.isFile || ((info.mode ?? 0o755) & 0o111) === 0) {
      throw new Error(`MUXBRIDGE_TEST_BIN="${bin}": not an executable file`);
    }
    return [path];
  }
  const root = new URL("../../", import.meta.url).pathname;
  return [Deno.execPath(), "run", "--allow-all", "--quiet", `${root}main.ts`];
}

/** A running bridge process. */
export interface BridgeProcess {
  /** Sends one JSON message as a line. */
  send(message: unknown): Promise<void>;
  /** Sends raw text. */
  sendRaw(text: string): Promise<void>;
  /** Sends raw bytes (invalid UTF-8 included). */
  sendBytes(bytes: Uint8Array): Promise<void>;
  /** Every stdout line so far, parsed. */
  lines: Array<Record<string, unknown>>;
  /** When each of {@linkcode BridgeProcess.lines} arrived (`performance.now()`), for benchmarks. */
  arrivals: number[];
  /** stdout lines that were not JSON (must stay empty). */
  junk: string[];
  /** Waits until a line matches, or throws after `ms` (a ceiling for a hung test; default 60 s). */
  waitFor(
    pred: (line: Record<string, unknown>) => boolean,
    ms?: number,
  ): Promise<Record<string, unknown>>;
  /** Closes stdin. */
  endInput(): Promise<void>;
  /** Sends a signal. */
  kill(signal: Deno.Signal): void;
  /** Resolves with the exit status, once stdout and stderr have been read to their end. */
  status: Promise<Deno.CommandStatus>;
  /** The process id. */
  pid: number;
  /** Collected stderr text. */
  stderr(): string;
}

/**
 * Starts `muxbridge bridge` with the given args and environment.
 *
 * @param args Arguments after `bridge`.
 * @param env Environment (replaces the inherited one entirely, plus PATH).
 * @returns The process handle.
 */
export function startBridge(args: string[], env: Record<string, string>): BridgeProcess {
  const [cmd, ...pre] = muxbridgeArgv();
  const child = new Deno.Command(cmd, {
    args: [...pre, "bridge", ...args],
    env: { PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin", ...env, ...runTag() },
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const lines: Array<Record<string, unknown>> = [];
  const arrivals: number[] = [];
  const junk: string[] = [];
  let stderrText = "";
  const writer = child.stdin.getWriter();
  const enc = new TextEncoder();
  const stdoutRead = (async () => {
    let buf = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buf += chunk;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        try {
          lines.push(JSON.parse(line));
          arrivals.push(performance.now());
        } catch {
          junk.push(line);
        }
      }
    }
    if (buf) junk.push(buf);
  })();
  const stderrRead = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) {
      stderrText += chunk;
    }
  })();
  const clock = createRealClock();
  // The exit status is only reported once stdout and stderr have been read to their end: the
  // process can exit before this side has parsed the last chunk it wrote (seen against the Bun
  // binary, whose exit follows `bye` within a millisecond: `lines` still ended at `ready`). A
  // bound keeps a stray holder of the pipes (none is expected) from hanging the test.
  const status = child.status.then(async (s) => {
    const drained = Promise.all([stdoutRead, stderrRead]).then(() => true);
    let timer: ReturnType<typeof clock.setTimeout> | undefined;
    const bound = new Promise<false>((resolve) => {
      timer = clock.setTimeout(() => resolve(false), 10_000);
    });
    const done = await Promise.race([drained, bound]);
    if (timer !== undefined) clock.clearTimeout(timer);
    if (!done) stderrText += "\n(test harness: stdout/stderr still open 10 s after exit)";
    return s;
  });
  return {
    lines,
    arrivals,
    junk,
    pid: child.pid,
    status,
    stderr: () => stderrText,
    send: (m) => writer.write(enc.encode(`${JSON.stringify(m)}\n`)),
    sendRaw: (t) => writer.write(enc.encode(t)),
    sendBytes: (b) => writer.write(b),
    endInput: () => writer.close().catch(() => {}),
    kill: (s) => {
      try {
        child.kill(s);
      } catch { /* already exited */ }
    },
    async waitFor(pred, ms = 60_000) {
      let hit: Record<string, unknown> | undefined;
      const ok = await waitFor(clock, () => (hit = lines.find(pred)) !== undefined, {
        deadline: clock.now() + ms,
        maxIntervalMs: 25,
      });
      if (!ok || !hit) {
        throw new Error(
          `no matching line within ${ms} ms; got ${JSON.stringify(lines)}\nstderr: ${stderrText}`,
        );
      }
      return hit;
    },
  };
}

/** A session event in OpenCode's shape. */
export const events = {
  created: (id: string, title: string, parentID: string | null, directory: string) => ({
    type: "session.created",
    properties: {
      sessionID: id,
      info: { id, title, directory, ...(parentID ? { parentID } : {}) },
    },
  }),
  updated: (id: string, title: string, parentID: string, directory: string) => ({
    type: "session.updated",
    properties: { sessionID: id, info: { id, title, directory, parentID } },
  }),
  status: (id: string, type: "busy" | "idle" | "retry") => ({
    type: "session.status",
    properties: { sessionID: id, status: { type } },
  }),
  idle: (id: string) => ({ type: "session.idle", properties: { sessionID: id } }),
  deleted: (id: string, parentID: string, directory: string) => ({
    type: "session.deleted",
    properties: { sessionID: id, info: { id, title: "", directory, parentID } },
  }),
};
