/**
 * muxbridge's entry point: parses argv, builds the real dependencies, runs the command, renders
 * its result and maps errors to exit codes. The only place that exits the process.
 *
 * @module
 */

// First: zod's settings must be in place before any module builds a schema.
import "./lib/sys/zod_jitless.ts";
import { existsSync, readFileSync } from "node:fs";
import process from "node:process";
import denoConfig from "./deno.json" with { type: "json" };
import { BACKENDS } from "./backends/mod.ts";
import { commandNamed, parseInvocation } from "./lib/cli/cli.ts";
import { createRealClock } from "./lib/sys/clock.ts";
import type { CliDeps, Command } from "./lib/cli/commands/_command.ts";
import { loadCommands } from "./lib/cli/commands/load.ts";
import { exitCodeFor, isMuxError, MuxError } from "./lib/sys/errors.ts";
import { createRunner } from "./lib/sys/exec.ts";
import { createLogger, fileSink, type LogLevel, stderrSink } from "./lib/sys/log.ts";
import { createProcesses } from "./lib/sys/processes.ts";
import { createRealFiles } from "./lib/install/files.ts";
import { selfCommand } from "./lib/install/self_command.ts";
import { processBridgeIO } from "./lib/sys/stdio.ts";
import { flushOutput, processStderr, processStdout } from "./lib/sys/output.ts";

/** muxbridge's version, from deno.json. */
export const VERSION: string = denoConfig.version;

function runtime(): string {
  const bun = (process.versions as Record<string, string | undefined>).bun;
  if (bun) return `bun ${bun}`;
  return typeof Deno !== "undefined"
    ? `deno ${Deno.version.deno}`
    : `node ${process.versions.node}`;
}

/** The command that runs this muxbridge (what `install` records for the plugin). */
function self(): string[] {
  const bun = (process.versions as Record<string, string | undefined>).bun;
  const deno = typeof Deno !== "undefined" && !bun;
  return selfCommand({
    execPath: deno ? Deno.execPath() : process.execPath,
    mainUrl: import.meta.url,
    runtime: bun ? "bun" : deno ? "deno" : "node",
    exists: existsSync,
  });
}

function args(): string[] {
  return typeof Deno !== "undefined" &&
      !(process.versions as Record<string, string | undefined>).bun
    ? [...Deno.args]
    : process.argv.slice(2);
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (err) {
    if ((err as { code?: string }).code === "ENOENT") return null;
    throw new MuxError("invalid_config", `Cannot read "${path}": ${(err as Error).message}`);
  }
}

async function main(argv: string[]): Promise<number> {
  const commands = await loadCommands(argv);
  let parsed;
  try {
    parsed = parseInvocation(argv, commands, BACKENDS);
  } catch (err) {
    return fail(err, commandNamed(argv, commands));
  }
  if (parsed.kind === "help") {
    processStdout().write(parsed.text);
    return 0;
  }
  const { command, invocation } = parsed;
  const global = invocation.global;
  const log = createLogger(
    (global.logLevel ?? "info") as LogLevel,
    global.logFile ? fileSink(global.logFile) : stderrSink,
  );
  const abort = new AbortController();
  let stdoutGone = false;
  if (command.name !== "bridge") {
    process.on("SIGINT", () => abort.abort());
    // A reader that went away (`muxbridge demo | head -3`) stops the command as Ctrl+C does, so
    // that it still cleans up (an unhandled EPIPE would end the process on the spot).
    process.stdout.on("error", (err: Error & { code?: string }) => {
      if (err.code !== "EPIPE") throw err;
      stdoutGone = true;
      abort.abort();
    });
  }
  const deps: CliDeps = {
    env: (name) => process.env[name],
    run: createRunner(),
    clock: createRealClock(),
    processes: createProcesses(),
    fetch: (input, init) => fetch(input, init),
    readText,
    stdout: (text) => {
      if (!stdoutGone) processStdout().write(text);
    },
    log,
    cwd: process.cwd(),
    version: VERSION,
    runtime: runtime(),
    signal: abort.signal,
    bridgeIO: processBridgeIO,
    backends: BACKENDS,
    files: createRealFiles(),
    self: self(),
  };
  try {
    const result = await command.run(invocation, deps);
    if (global.json && result.json !== undefined) {
      deps.stdout(`${JSON.stringify(result.json, null, 2)}\n`);
    } else if (result.text) deps.stdout(result.text);
    if (result.exitCode && result.failure) {
      processStderr().write(`muxbridge: ${result.failure}\n`);
    }
    return result.exitCode ?? 0;
  } catch (err) {
    // Ctrl+C is 130 whatever the command was doing when it gave up.
    if (abort.signal.aborted) {
      const why = stdoutGone
        ? new MuxError("interrupted", "Interrupted: nothing reads stdout any more")
        : isMuxError(err, "interrupted")
        ? err
        : new MuxError("interrupted", "Interrupted");
      return fail(why, command);
    }
    return fail(err, command);
  }
}

/** Reports a failure: one stderr line, the command's own stdout form, the exit code. */
function fail(err: unknown, command?: Command): number {
  if (err instanceof MuxError) {
    // One line that says what went wrong and what to do (contract).
    processStderr().write(`muxbridge: ${err.message}${err.hint ? `. ${err.hint}` : ""}\n`);
    const out = command?.failureOutput?.(err);
    if (out) processStdout().write(out);
    return exitCodeFor(err.code);
  }
  processStderr().write(`muxbridge: internal error: ${(err as Error)?.stack ?? err}\n`);
  return 1;
}

if (import.meta.main) {
  const code = await main(args());
  // Everything written must reach the pipes first: exit() drops what the runtime still holds
  // for a slow reader (lib/sys/output.ts).
  await flushOutput();
  process.exit(code);
}
