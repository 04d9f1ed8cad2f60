/**
 * The program a child's pane runs: the attach command inside a small POSIX start command that
 * makes the wait and a failure visible. Before the attach command starts, the pane shows one line
 * naming what it attaches to (the child's title, its session, the server), so that it is never
 * blank while `opencode attach` starts (seconds on a cold machine); the attach command's own
 * screen then takes over. When the attach command exits non-zero (the server is unreachable,
 * the session unknown …) the pane stays: what the program printed stays on screen, followed by
 * one line with its exit code, for `failed_pane_hold_ms` (and a little more, so that a live
 * bridge closes it first and reports it `failed`); the exit code is written to a private file
 * named by the pane's spawn token, which the bridge's pane watch reads (`PaneStore.exits`).
 *
 * Why a file and not the multiplexer: every backend runs a program (by argv or by one quoted
 * `/bin/sh -c` string), but only tmux keeps a dead pane's exit status (`remain-on-exit`,
 * `#{pane_dead_status}`); zellij, kitty, herdr, cmux and WezTerm close the pane or say nothing.
 * The state directory is private (0700), so nobody else can write a report there.
 *
 * The script is a constant: every value (the hold, the file, the program and its arguments)
 * arrives as a positional parameter, never parsed by the shell; where a backend must turn argv
 * into one command string it quotes each element once (`lib/sys/shell_quote.ts`). It is one line
 * without a backslash, so that it can be typed into a terminal too (cmux refuses both: its
 * command goes through the user's interactive shell). An exit by a
 * signal or an interrupt (codes above 128) is no failure; OpenCode's attach exits 0 on the Ctrl+C
 * of muxbridge's own close (seen live, 1.18.33).
 *
 * @module
 */

/** `$0` of the start command: names it in `ps` and in the multiplexer's view of the pane. */
export const HOLD_NAME = "muxbridge-hold";

/**
 * The start command's script (one line). `$1`: seconds to hold (as the pane says it); `$2`:
 * seconds more before it ends by itself (a live bridge closes it first); `$3`: the exit file
 * ("" for none); `$4`: `1` when muxbridge owns the pane title; `$5`: the line shown until the
 * program draws ("" for none); then the program and its arguments. `printf` and `echo` are
 * built into every POSIX `sh` here: the line costs no process.
 */
export const HOLD_SCRIPT: string = [
  "h=$1 s=$2 f=$3 t=$4 m=$5; shift 5",
  'if [ -n "$m" ]; then printf "%s" "$m"; echo; fi',
  'if [ "$t" = 1 ]; then OPENCODE_DISABLE_TERMINAL_TITLE=1; export OPENCODE_DISABLE_TERMINAL_TITLE; fi',
  '"$@"; c=$?',
  'if [ "$c" -eq 0 ] || [ "$c" -gt 128 ]; then exit "$c"; fi',
  'if [ -n "$f" ]; then (umask 077; echo "$c" > "$f.tmp" && mv -f "$f.tmp" "$f"); fi',
  'if [ "$h" -gt 0 ]; then echo; printf "%s" "[muxbridge] ${1##*/} exited with code $c; this pane closes in $h s"; echo; sleep "$((h + s))"; fi',
  'exit "$c"',
].join("; ");

/** What the start command needs besides the program. */
export interface HoldOptions {
  /** `failed_pane_hold_ms`: how long a failed pane stays (0: it closes at once). */
  holdMs: number;
  /** The bridge's poll interval: the hold is made this much longer, so the bridge closes first. */
  slackMs?: number;
  /** Where the exit code goes (`PaneStore.exitFile`); absent: nowhere (`muxbridge spawn`). */
  exitFile?: string;
  /**
   * muxbridge sets the pane's title: OpenCode's TUI is told not to set its own
   * (`OPENCODE_DISABLE_TERMINAL_TITLE`, OpenCode 1.18.33; without it the TUI's `OC | <title>`
   * replaced muxbridge's title two seconds after the attach, seen live on tmux 3.3a).
   * @default false
   */
  ownsTitle?: boolean;
  /**
   * The line the pane shows until the program draws ({@linkcode attachingLine}); it must be
   * clean (no control characters). @default none
   */
  banner?: string;
}

/** The index of the exit file in {@linkcode holdArgv}'s result. */
const EXIT_FILE_AT = 6;

/**
 * The line a child's pane shows while `opencode attach` starts.
 *
 * @param title The clean title.
 * @param sessionId The session.
 * @param server The server URL (without credentials).
 * @returns The line.
 *
 * @example
 * ```ts
 * import { attachingLine } from "./pane_program.ts";
 * attachingLine("fix the parser", "ses_1", "http://127.0.0.1:4096");
 * // '[muxbridge] attaching to "fix the parser" (ses_1) on http://127.0.0.1:4096 …'
 * ```
 */
export function attachingLine(
  title: string,
  sessionId: string,
  server: string,
): string {
  const what = title === "" ? sessionId : `"${title}" (${sessionId})`;
  return `[muxbridge] attaching to ${what} on ${server} …`;
}

/**
 * Whether an argv is the start command that reports to an exit file: the process a pane of
 * muxbridge's runs, told apart by the private, random file only that pane was given.
 *
 * @param argv A process's argv.
 * @param exitFile The pane's exit file (`PaneStore.exitFile` of its spawn token).
 * @returns Whether it is that pane's start command.
 *
 * @example
 * ```ts
 * import { holdArgv, isHoldProgram } from "./pane_program.ts";
 * const argv = holdArgv(["opencode", "attach"], { holdMs: 0, exitFile: "/state/exits/ab12" });
 * isHoldProgram(argv, "/state/exits/ab12"); // true
 * ```
 */
export function isHoldProgram(
  argv: readonly string[],
  exitFile: string,
): boolean {
  return exitFile !== "" && argv.length > EXIT_FILE_AT &&
    argv[0] === "/bin/sh" &&
    argv[1] === "-c" && argv[2] === HOLD_SCRIPT && argv[3] === HOLD_NAME &&
    argv[EXIT_FILE_AT] === exitFile;
}

/**
 * The argv of a pane that runs `argv` and holds on a failure.
 *
 * @param argv The program and its arguments (the attach command).
 * @param options The hold, the exit file and the line shown meanwhile.
 * @returns `["/bin/sh", "-c", HOLD_SCRIPT, "muxbridge-hold", <hold s>, <slack s>, <file>, <0|1>,
 *   <line>, …argv]`.
 *
 * @example
 * ```ts
 * import { holdArgv } from "./pane_program.ts";
 * holdArgv(["opencode", "attach", "http://127.0.0.1:4096"], { holdMs: 30000 }).slice(3);
 * // ["muxbridge-hold", "30", "0", "", "0", "", "opencode", "attach", "http://127.0.0.1:4096"]
 * ```
 */
export function holdArgv(argv: readonly string[], options: HoldOptions): string[] {
  const hold = Math.ceil(Math.max(0, options.holdMs) / 1000);
  const slack = hold === 0 ? 0 : Math.ceil(Math.max(0, options.slackMs ?? 0) / 1000) + 2;
  return [
    "/bin/sh",
    "-c",
    HOLD_SCRIPT,
    HOLD_NAME,
    String(hold),
    String(slack),
    options.exitFile ?? "",
    options.ownsTitle ? "1" : "0",
    options.banner ?? "",
    ...argv,
  ];
}
