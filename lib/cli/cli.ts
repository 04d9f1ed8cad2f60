/**
 * Command-line parsing, separate from running: argv becomes a typed {@linkcode Parsed} value or a
 * `usage` error, before anything is probed.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { LOG_LEVELS } from "../config/config.ts";
import { MuxError } from "../sys/errors.ts";
import type { Command, Invocation } from "./commands/_command.ts";
import { suggest } from "./suggest.ts";

/** What argv asks for. */
export type Parsed =
  | { kind: "help"; text: string }
  | { kind: "run"; command: Command; invocation: Invocation };

type OptionSpec = { type: "string" | "boolean"; short?: string };

/** A flag as `--help` shows it: `value` names what a string flag takes. */
type HelpSpec = OptionSpec & { help: string; value?: string };

const GLOBAL: Record<string, HelpSpec> = {
  config: {
    type: "string",
    value: "FILE",
    help: "Config file (else $MUXBRIDGE_CONFIG, else ~/.config/muxbridge/config.json)",
  },
  backend: {
    type: "string",
    value: "NAME",
    help: "Backend: auto|none|NAME (see `muxbridge schema config`)",
  },
  "log-level": { type: "string", value: "LEVEL", help: `Log level: ${LOG_LEVELS.join("|")}` },
  "log-file": { type: "string", value: "FILE", help: "Write logs to this file instead of stderr" },
  help: { type: "boolean", short: "h", help: "Show help" },
  version: { type: "boolean", help: "Show the version" },
};

/**
 * What a command's string flag takes, as its usage line names it (`--session ID` → `ID`), so
 * the flag list and the usage line never disagree; `VALUE` when the usage line does not say.
 */
function valueName(usage: string, flag: string): string {
  // Flag names are lowercase letters and dashes: nothing in them needs escaping.
  return new RegExp(`--${flag} ([A-Z][A-Z_]*)\\b`).exec(usage)?.[1] ?? "VALUE";
}

/**
 * Flag help lines with their descriptions in one column: `  -h, --help   Show help`.
 *
 * @param flags Each flag's name and how `--help` shows it.
 * @returns The lines.
 */
function flagLines(flags: ReadonlyArray<[string, HelpSpec]>): string[] {
  const left = flags.map(([name, spec]) =>
    `${spec.short ? `-${spec.short}, ` : ""}--${name}${
      spec.type === "string" ? ` ${spec.value ?? "VALUE"}` : ""
    }`
  );
  const width = Math.max(0, ...left.map((l) => l.length));
  return flags.map(([, spec], i) => `  ${left[i].padEnd(width)}  ${spec.help}`);
}

/** The values `--backend` takes: `auto`, `none` and each backend's name. */
function backendChoices(backends: readonly { name: string }[]): string[] {
  return ["auto", "none", ...backends.map((b) => b.name)];
}

/**
 * The top-level usage text.
 *
 * @param commands The command table.
 * @param backends The backends (the registry), whose names `--backend` takes.
 * @returns The help text.
 */
export function usageText(
  commands: readonly Command[],
  backends: readonly { name: string }[],
): string {
  const global = {
    ...GLOBAL,
    backend: { ...GLOBAL.backend, help: `Backend: ${backendChoices(backends).join("|")}` },
  };
  const width = Math.max(...commands.map((c) => c.name.length));
  return [
    "muxbridge: one terminal-multiplexer pane per OpenCode child session",
    "",
    "Usage: muxbridge <command> [flags]",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Global flags:",
    ...flagLines(Object.entries(global)),
    "",
    "Exit codes: 0 ok, 1 failed, 2 usage, 3 environment (no multiplexer, missing binary,",
    "old version, bad config), 130 interrupted.",
    "`muxbridge <command> --help` shows a command's flags and an example.",
    "",
  ].join("\n");
}

/**
 * A command's help text.
 *
 * @param command The command.
 * @returns The help text.
 */
export function commandHelp(command: Command): string {
  const own: Array<[string, HelpSpec]> = Object.entries(command.flags).map((
    [name, spec],
  ) => [name, { ...spec, value: valueName(command.usage, name) }]);
  if (command.json) own.push(["json", { type: "boolean", help: "Print JSON on stdout" }]);
  const flags = flagLines(own);
  return [
    `Usage: ${command.usage}`,
    "",
    command.summary,
    "",
    command.help,
    "",
    ...(flags.length ? ["Flags:", ...flags, ""] : []),
  ].join("\n");
}

/**
 * Parses argv against the command table.
 *
 * Every flag is checked against the table before anything else happens, and each kind of
 * mistake gets its own message naming the flag: an unknown flag, a flag missing its value, a
 * value given to a flag that takes none, a value that looks like a flag. A leading `--` is
 * dropped, as `npm run x -- args` and `deno task x -- args` pass it on.
 *
 * @param argv The arguments after the program name.
 * @param commands The command table.
 * @param backends The backends (the registry), whose names `--backend` takes.
 * @returns Help to print, or the command to run with its invocation.
 * @throws {MuxError} `usage` for an unknown command or flag, a missing or extra argument, or an
 *   invalid global flag value.
 *
 * @example
 * ```ts
 * import { parseInvocation } from "./cli.ts";
 * import { COMMANDS } from "./commands/mod.ts";
 * const parsed = parseInvocation(["--", "close", "%3", "--json"], COMMANDS, [{ name: "tmux" }]);
 * if (parsed.kind === "run") parsed.invocation.positionals; // ["%3"]
 * ```
 */
export function parseInvocation(
  argv: readonly string[],
  commands: readonly Command[],
  backends: readonly { name: string }[],
): Parsed {
  const args = argv[0] === "--" ? argv.slice(1) : [...argv];
  const globalOptions: Record<string, OptionSpec> = Object.fromEntries(
    Object.entries(GLOBAL).map((
      [k, v],
    ) => [k, v.short ? { type: v.type, short: v.short } : { type: v.type }]),
  );
  // Find the command: the first positional, with global flags (and their values) skipped.
  const scanOptions = { ...globalOptions, json: { type: "boolean" as const } };
  const scan = tokenize(args, scanOptions);
  const first = scan.tokens.find((t) => t.kind === "positional");
  const name = first?.kind === "positional" ? first.value : undefined;
  if (name === undefined) {
    checkFlags(scan.tokens, scanOptions, "muxbridge", "Run `muxbridge --help` for the flags");
    if (scan.values.version) {
      return {
        kind: "run",
        command: find(commands, "version"),
        invocation: { values: {}, positionals: [], global: { json: scan.values.json === true } },
      };
    }
    if (scan.values.help) return { kind: "help", text: usageText(commands, backends) };
    throw new MuxError("usage", "Cannot run muxbridge without a command", {
      hint: "Run `muxbridge --help` for the list",
    });
  }
  const command = find(commands, name);
  const options: Record<string, OptionSpec> = { ...globalOptions };
  for (const [flag, spec] of Object.entries(command.flags)) options[flag] = { type: spec.type };
  if (command.json) options.json = { type: "boolean" };
  const parsed = tokenize(args, options);
  checkFlags(
    parsed.tokens,
    options,
    command.name,
    `Run \`muxbridge ${command.name} --help\` for its flags`,
  );
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) return { kind: "help", text: commandHelp(command) };
  const positionals = parsed.positionals.slice(1);
  const [min, max] = command.positionals;
  if (positionals.length < min || positionals.length > max) {
    throw new MuxError(
      "usage",
      `Cannot run ${command.name}: expected ${
        min === max ? min : `${min}-${max}`
      } argument(s), got ${positionals.length}`,
      {
        hint: `Usage: ${command.usage}`,
      },
    );
  }
  const choice = (flag: string, allowed: readonly string[]) => {
    const v = values[flag];
    if (v !== undefined && (typeof v !== "string" || !allowed.includes(v))) {
      throw new MuxError(
        "usage",
        `Cannot use --${flag} ${JSON.stringify(v)}: choose one of ${allowed.join(", ")}`,
      );
    }
    return v as string | undefined;
  };
  const global = {
    json: values.json === true,
    ...(typeof values.config === "string" ? { config: values.config } : {}),
    ...(choice("backend", backendChoices(backends)) ? { backend: values.backend as string } : {}),
    ...(choice("log-level", LOG_LEVELS) ? { logLevel: values["log-level"] as string } : {}),
    ...(typeof values["log-file"] === "string" ? { logFile: values["log-file"] } : {}),
  };
  const own: Record<string, string | boolean | undefined> = {};
  for (const flag of Object.keys(command.flags)) own[flag] = values[flag];
  return { kind: "run", command, invocation: { values: own, positionals, global } };
}

/**
 * The command an argv names, if it names one, whether or not the rest of it is valid (`main.ts`
 * uses it to let a command that could not start say so in its own format).
 *
 * @param argv The arguments after the program name.
 * @param commands The command table.
 * @returns The command, or undefined.
 */
export function commandNamed(
  argv: readonly string[],
  commands: readonly Command[],
): Command | undefined {
  const args = argv[0] === "--" ? argv.slice(1) : [...argv];
  const options = Object.fromEntries(
    Object.entries(GLOBAL).map(([k, v]) => [k, { type: v.type }]),
  );
  const first = tokenize(args, options).tokens.find((t) => t.kind === "positional");
  return first?.kind === "positional" ? commands.find((c) => c.name === first.value) : undefined;
}

type Token = NonNullable<ReturnType<typeof parseArgs>["tokens"]>[number];

/** parseArgs without its own errors: {@linkcode checkFlags} words them. */
function tokenize(args: string[], options: Record<string, OptionSpec>) {
  const r = parseArgs({ args, options, allowPositionals: true, strict: false, tokens: true });
  return { values: r.values, positionals: r.positionals, tokens: r.tokens ?? [] as Token[] };
}

/** Refuses the first flag that is unknown, lacks its value, or has one it must not have. */
function checkFlags(
  tokens: readonly Token[],
  options: Record<string, OptionSpec>,
  what: string,
  hint: string,
): void {
  for (const t of tokens) {
    if (t.kind !== "option") continue;
    const spec = Object.hasOwn(options, t.name) ? options[t.name] : undefined;
    const flag = t.rawName;
    if (!spec) {
      const meant = meantFlag(flag, options);
      throw new MuxError("usage", `Cannot run ${what}: unknown flag ${JSON.stringify(flag)}`, {
        hint: meant ? `Did you mean ${JSON.stringify(meant)}?` : hint,
      });
    }
    if (spec.type === "string" && t.value === undefined) {
      throw new MuxError("usage", `Cannot run ${what}: ${flag} needs a value`, { hint });
    }
    if (spec.type === "boolean" && t.value !== undefined) {
      throw new MuxError(
        "usage",
        `Cannot run ${what}: ${flag} takes no value, got ${JSON.stringify(t.value)}`,
        { hint },
      );
    }
    if (spec.type === "string" && !t.inlineValue && t.value?.startsWith("-")) {
      throw new MuxError(
        "usage",
        `Cannot run ${what}: the value ${JSON.stringify(t.value)} of ${flag} looks like a flag`,
        { hint: `Write ${flag}=${t.value} if it is the value` },
      );
    }
  }
}

/**
 * The flag a mistyped one most likely meant: `--jsn` → `--json`; a lone letter (`-v`) → the
 * only flag that starts with it (`--version`).
 */
function meantFlag(flag: string, options: Record<string, OptionSpec>): string | undefined {
  const names = Object.keys(options);
  if (flag.startsWith("--")) {
    const meant = suggest(flag.slice(2), names);
    return meant === undefined ? undefined : `--${meant}`;
  }
  const starts = names.filter((n) => flag.length === 2 && n.startsWith(flag[1].toLowerCase()));
  return starts.length === 1 ? `--${starts[0]}` : undefined;
}

function find(commands: readonly Command[], name: string): Command {
  const command = commands.find((c) => c.name === name);
  if (!command) {
    const meant = suggest(name, commands.map((c) => c.name));
    throw new MuxError("usage", `Cannot run unknown command ${JSON.stringify(name)}`, {
      hint: meant
        ? `Did you mean ${JSON.stringify(meant)}?`
        : "Run `muxbridge --help` for the list",
    });
  }
  return command;
}
