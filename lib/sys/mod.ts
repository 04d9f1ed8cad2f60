/**
 * The seams to the operating system, each the one place its runtime API is used: running
 * programs (`exec.ts`, the only `Deno.Command`; `line_process.ts` for long-lived ones), the
 * clock and condition waits (`clock.ts`), processes and signals (`processes.ts`), private files
 * (`private_fs.ts`, `credentials_file.ts`), a file's identity (`file_stamp.ts`: a socket a
 * restarted server binds anew), stdio and logs (`stdio.ts`, `output.ts`, `log.ts`),
 * sockets (`unix_request.ts`), and the helpers every layer shares: typed errors (`errors.ts`),
 * shell quoting for the one pane command (`shell_quote.ts`), environment lookups (`env.ts`), line
 * reading and output parsing, and the checks every value passes before it reaches an argv or a
 * pane command (`validate.ts`: session ids, pane targets, directories, URLs, titles); and zod's
 * settings (`zod_jitless.ts`, which `main.ts` imports first).
 *
 * May import: nothing of muxbridge outside `lib/sys/`. Everything else may import it.
 * `tests/import_direction_test.ts` keeps it so.
 *
 * @module
 */

export { type Clock, createRealClock, sleep, type TimerId, waitFor } from "./clock.ts";
export { type ErrorCode, isMuxError, MuxError, toMuxError } from "./errors.ts";
export { createRunner, type Runner, type RunOptions, type RunResult } from "./exec.ts";
export { createLogger, type Logger, silentLogger } from "./log.ts";
export { createProcesses, type Processes } from "./processes.ts";
export { quote, shellCommand } from "./shell_quote.ts";
