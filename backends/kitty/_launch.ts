/**
 * Private to the kitty backend: the `launch` arguments for one pane. Pure, so the rules for what
 * kitty would otherwise rewrite are tested without a kitty.
 *
 * What kitty does to `launch` values (kitty 0.26.5 source, `kitty/launch.py`,
 * `kitty/options/utils.py`, `kitty/child.py`, each confirmed live under Xvfb):
 * - `--env K=V`: the value is stripped of surrounding whitespace and `$VAR`/`${VAR}` are expanded
 *   from kitty's own environment (`FOO=a $HOME` arrived as `a /tmp/kx/home`). Unused: it is also
 *   argv of the `kitty @` client, so credentials go through `lib/sys/credentials_file.ts` instead.
 * - `--cwd`: `os.path.expandvars` (no escape at all) and `expanduser`; a directory that then does
 *   not exist is silently replaced (the program started in `/`).
 * - program arguments: exec'd as argv with no shell, but an argument that is exactly
 *   `@active-kitty-window-id` (and `@selection`, `@line-count`, `@cursor-x`, … in some states)
 *   is replaced (`@active-kitty-window-id` arrived as `1`). `$HOME`, `~` stay literal.
 * - `--title`: literal, except the special value `current` (copies the active window's title).
 *
 * @module
 */

import { checkProgramArgv } from "../../lib/backend/_program_argv.ts";
import { quote, shellCommand } from "../../lib/sys/shell_quote.ts";
import { SPAWN_TOKEN_VAR, tokenMarker } from "../../lib/backend/spawn_token.ts";

/** The token, checked (tokenMarker throws for anything else). */
const checkToken = (token: string) => (tokenMarker(token), token);

/** The user variables muxbridge marks its windows with (kitty >= 0.30). */
export const MARK_SESSION = "muxbridge_session";
/** See {@linkcode MARK_SESSION}. */
export const MARK_OWNER = "muxbridge_owner";

/** What one pane needs. */
export interface LaunchInput {
  /** The clean title. */
  title: string;
  /** The validated absolute directory. */
  cwd: string;
  /** The program and its arguments. */
  argv: readonly string[];
  /** The window to open next to (its tab is used), if any. */
  anchor?: string;
  /** kitty understands `--next-to` (0.40+). */
  nextTo: boolean;
  /** Ownership marks as user variables (0.30+), if supported. */
  marks?: { sessionId: string; owner: string };
  /** The spawn token, put in the window's environment (`--env`, every version). */
  token?: string;
}

/** The `launch` arguments, and a title to set afterwards when `--title` cannot carry it. */
export interface LaunchPlan {
  /** Arguments after `@ --to <address>`. */
  args: string[];
  /** Set with `set-window-title` once the window exists (the title `current`). */
  titleAfter?: string;
}

/** Prefix of program arguments kitty may substitute (see the module note). */
const SUBSTITUTED = /^@/;

/**
 * Builds the `launch` arguments.
 *
 * @param input The pane.
 * @returns The plan.
 * @throws {MuxError} `invalid_argument` for an empty argv or a NUL.
 */
export function launchArgs(input: LaunchInput): LaunchPlan {
  const { argv, cwd } = input;
  checkProgramArgv(argv);
  const args = ["launch", "--type=window", "--keep-focus"];
  if (input.anchor !== undefined) {
    // --match picks the tab holding the anchor (0.26: "window_id … match the tab that contains
    // the window"); --next-to (0.40+) also places the window beside it.
    args.push(`--match=window_id:${input.anchor}`);
    if (input.nextTo) args.push(`--next-to=id:${input.anchor}`);
  }
  // vsplit splits the active window side by side in the splits layout; every other layout reads
  // it as "after the active window", its default (kitty 0.26.5 layout/base.py
  // add_non_overlay_window), so it is passed always and no listing is needed to choose.
  args.push("--location=vsplit");
  let titleAfter: string | undefined;
  if (input.title === "current") titleAfter = input.title;
  else if (input.title !== "") args.push(`--title=${input.title}`);
  if (input.marks) {
    args.push(`--var=${MARK_SESSION}=${input.marks.sessionId}`);
    args.push(`--var=${MARK_OWNER}=${input.marks.owner}`);
  }
  // Hex digits only: nothing in it for kitty's `$VAR` expansion or whitespace stripping. It is
  // argv of the `kitty @` client, which is fine for a token (it grants nothing by itself).
  if (input.token !== undefined) args.push(`--env=${SPAWN_TOKEN_VAR}=${checkToken(input.token)}`);
  // A directory with `$` cannot pass --cwd intact, and an argument starting with `@` may be
  // substituted: then run an explicit /bin/sh whose one command string quotes every value once.
  if (cwd.includes("$") || argv.some((a) => SUBSTITUTED.test(a))) {
    args.push("--", "/bin/sh", "-c", `cd ${quote(cwd)} && exec ${shellCommand(argv)}`);
  } else {
    args.push(`--cwd=${cwd}`, "--", ...argv);
  }
  return titleAfter === undefined ? { args } : { args, titleAfter };
}
