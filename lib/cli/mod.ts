/**
 * The command line: argv parsed into a typed invocation before anything is probed (`cli.ts`),
 * and one file per command under `commands/`, each owning its help, with the wiring the commands
 * share (`commands/_context.ts`: config, backend selection, the pane store). `main.ts` builds
 * the real dependencies and runs what this folder parses.
 *
 * The top floor of `lib/`: it may import every other folder. Like the rest of `lib/` it never
 * imports `backends/`: `main.ts` hands the commands the registry (`CliDeps.backends`). Nothing in
 * `lib/` imports this folder. `tests/import_direction_test.ts` keeps it so.
 *
 * @module
 */

export { commandNamed, type Parsed, parseInvocation, usageText } from "./cli.ts";
