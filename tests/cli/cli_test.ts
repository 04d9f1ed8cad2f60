import assert from "node:assert/strict";
import {
  commandHelp,
  commandNamed,
  type Parsed,
  parseInvocation,
  usageText,
} from "../../lib/cli/cli.ts";
import type { Command, CommandResult, Invocation } from "../../lib/cli/commands/_command.ts";
import { COMMANDS } from "../../lib/cli/commands/mod.ts";
import { BACKENDS } from "../../backends/mod.ts";

const run = (): Promise<CommandResult> => Promise.resolve({ text: "" });

/** A small table with each shape the parser must handle. */
const TABLE: Command[] = [
  {
    name: "spawn",
    summary: "Open a pane",
    usage: "muxbridge spawn --session ID --url URL --dir DIR [--title T]",
    help: "Example: muxbridge spawn --session ses_1 --url http://h --dir /x",
    flags: {
      session: { type: "string", help: "Session id" },
      url: { type: "string", help: "Server URL" },
      dir: { type: "string", help: "Directory" },
      title: { type: "string", help: "Title" },
    },
    positionals: [0, 0],
    json: true,
    run,
  },
  {
    name: "close",
    summary: "Close a pane",
    usage: "muxbridge close PANE_ID [--force]",
    help: "Example: muxbridge close %3",
    flags: { force: { type: "boolean", help: "Any pane" } },
    positionals: [1, 1],
    json: true,
    run,
  },
  {
    name: "schema",
    summary: "Print a schema",
    usage: "muxbridge schema [config|protocol]",
    help: "Example: muxbridge schema protocol",
    flags: {},
    positionals: [0, 1],
    json: true,
    run,
  },
  {
    name: "demo",
    summary: "Run the demo",
    usage: "muxbridge demo",
    help: "Example: muxbridge demo",
    flags: {},
    positionals: [0, 0],
    json: false,
    run,
  },
  {
    name: "version",
    summary: "Print the version",
    usage: "muxbridge version [--json]",
    help: "Example: muxbridge version",
    flags: {},
    positionals: [0, 0],
    json: true,
    run,
  },
];

const NO_GLOBALS = { json: false };

function runs(argv: string[], commands: readonly Command[] = TABLE): {
  name: string;
  invocation: Invocation;
} {
  const parsed = parseInvocation(argv, commands, BACKENDS);
  assert.equal(parsed.kind, "run", `argv ${JSON.stringify(argv)} should run a command`);
  const r = parsed as Extract<Parsed, { kind: "run" }>;
  return { name: r.command.name, invocation: r.invocation };
}

function helps(argv: string[], commands: readonly Command[] = TABLE): string {
  const parsed = parseInvocation(argv, commands, BACKENDS);
  assert.equal(parsed.kind, "help", `argv ${JSON.stringify(argv)} should ask for help`);
  return (parsed as Extract<Parsed, { kind: "help" }>).text;
}

function usage(argv: string[], message: RegExp, commands: readonly Command[] = TABLE): void {
  assert.throws(
    () => parseInvocation(argv, commands, BACKENDS),
    (err: Error & { code?: string }) => {
      assert.equal(err.name, "MuxError", `argv ${JSON.stringify(argv)}`);
      assert.equal(err.code, "usage", `argv ${JSON.stringify(argv)}`);
      assert.match(err.message, message, `argv ${JSON.stringify(argv)}`);
      return true;
    },
  );
}

// ---------------------------------------------------------------- what runs

const RUN_CASES: Array<{ argv: string[]; name: string; invocation: Invocation }> = [
  {
    argv: ["spawn", "--session", "ses_1", "--url", "http://h:1", "--dir", "/x"],
    name: "spawn",
    invocation: {
      values: { session: "ses_1", url: "http://h:1", dir: "/x", title: undefined },
      positionals: [],
      global: NO_GLOBALS,
    },
  },
  {
    argv: ["spawn", "--session=ses_1", "--title=-looks like a flag", "--json"],
    name: "spawn",
    invocation: {
      values: { session: "ses_1", url: undefined, dir: undefined, title: "-looks like a flag" },
      positionals: [],
      global: { json: true },
    },
  },
  {
    argv: ["close", "%3"],
    name: "close",
    invocation: { values: { force: undefined }, positionals: ["%3"], global: NO_GLOBALS },
  },
  {
    argv: ["close", "--force", "w1:p3", "--json"],
    name: "close",
    invocation: { values: { force: true }, positionals: ["w1:p3"], global: { json: true } },
  },
  {
    argv: ["close", "--", "-5"],
    name: "close",
    invocation: { values: { force: undefined }, positionals: ["-5"], global: NO_GLOBALS },
  },
  {
    argv: ["schema"],
    name: "schema",
    invocation: { values: {}, positionals: [], global: NO_GLOBALS },
  },
  {
    argv: ["schema", "protocol"],
    name: "schema",
    invocation: { values: {}, positionals: ["protocol"], global: NO_GLOBALS },
  },
  {
    argv: ["demo"],
    name: "demo",
    invocation: { values: {}, positionals: [], global: NO_GLOBALS },
  },
  {
    argv: ["--config", "/etc/mb.json", "demo"],
    name: "demo",
    invocation: { values: {}, positionals: [], global: { json: false, config: "/etc/mb.json" } },
  },
  {
    argv: ["--config=/etc/mb.json", "demo"],
    name: "demo",
    invocation: { values: {}, positionals: [], global: { json: false, config: "/etc/mb.json" } },
  },
  {
    argv: ["--backend", "tmux", "--log-level", "debug", "--log-file", "/tmp/l", "close", "%1"],
    name: "close",
    invocation: {
      values: { force: undefined },
      positionals: ["%1"],
      global: { json: false, backend: "tmux", logLevel: "debug", logFile: "/tmp/l" },
    },
  },
  {
    argv: ["close", "%1", "--backend", "zellij", "--config", "/c.json", "--log-level", "error"],
    name: "close",
    invocation: {
      values: { force: undefined },
      positionals: ["%1"],
      global: { json: false, config: "/c.json", backend: "zellij", logLevel: "error" },
    },
  },
  {
    argv: ["--json", "version"],
    name: "version",
    invocation: { values: {}, positionals: [], global: { json: true } },
  },
];

Deno.test("parseInvocation() parses each command line of the table", () => {
  for (const c of RUN_CASES) {
    assert.deepEqual(runs(c.argv), { name: c.name, invocation: c.invocation }, c.argv.join(" "));
  }
});

Deno.test("parseInvocation() accepts every backend choice for --backend", () => {
  for (const backend of ["auto", "none", "tmux", "zellij", "herdr", "cmux", "kitty"]) {
    assert.equal(runs(["--backend", backend, "demo"]).invocation.global.backend, backend);
  }
});

// ---------------------------------------------------------------- usage errors

const USAGE_CASES: Array<{ argv: string[]; message: RegExp }> = [
  { argv: [], message: /^Cannot run muxbridge without a command$/ },
  { argv: ["bogus"], message: /^Cannot run unknown command "bogus"$/ },
  { argv: ["--json"], message: /without a command/ },
  { argv: ["--config", "/c.json"], message: /without a command/ },
  // Flags are named, whether or not a command was found (no parser text leaks through).
  { argv: ["--bogus"], message: /^Cannot run muxbridge: unknown flag "--bogus"$/ },
  { argv: ["--config"], message: /^Cannot run muxbridge: --config needs a value$/ },
  { argv: ["--", "--bogus"], message: /^Cannot run muxbridge: unknown flag "--bogus"$/ },
  { argv: ["demo", "--bogus"], message: /^Cannot run demo: unknown flag "--bogus"$/ },
  { argv: ["--bogus", "demo"], message: /^Cannot run demo: unknown flag "--bogus"$/ },
  { argv: ["close", "%1", "-x"], message: /^Cannot run close: unknown flag "-x"$/ },
  { argv: ["demo", "--json"], message: /^Cannot run demo: unknown flag "--json"$/ },
  { argv: ["--json", "demo"], message: /--json/ },
  { argv: ["close"], message: /expected 1 argument\(s\), got 0/ },
  { argv: ["close", "%1", "%2"], message: /expected 1 argument\(s\), got 2/ },
  { argv: ["demo", "extra"], message: /expected 0 argument\(s\), got 1/ },
  { argv: ["schema", "config", "protocol"], message: /expected 0-1 argument\(s\), got 2/ },
  { argv: ["--backend", "bogus", "demo"], message: /--backend "bogus": choose one of auto, none/ },
  { argv: ["demo", "--backend", "bogus"], message: /--backend "bogus"/ },
  { argv: ["demo", "--backend", ""], message: /--backend ""/ },
  { argv: ["demo", "--log-level", "trace"], message: /--log-level "trace"/ },
  { argv: ["demo", "--config"], message: /^Cannot run demo: --config needs a value$/ },
  { argv: ["spawn", "--session"], message: /^Cannot run spawn: --session needs a value$/ },
  {
    argv: ["close", "--force=yes", "%1"],
    message: /^Cannot run close: --force takes no value, got "yes"$/,
  },
  { argv: ["demo", "--version=1"], message: /--version takes no value/ },
  // A value that looks like a flag must be joined with "=".
  {
    argv: ["spawn", "--title", "-t"],
    message: /^Cannot run spawn: the value "-t" of --title looks like a flag$/,
  },
  // A command's own flag before the command name is not known yet: still a usage error.
  { argv: ["--session", "ses_1", "spawn"], message: /^Cannot / },
];

Deno.test("parseInvocation() answers each bad command line with a usage error", () => {
  for (const c of USAGE_CASES) usage(c.argv, c.message);
});

Deno.test("parseInvocation() words every usage error itself: one line, no final period", () => {
  for (const c of USAGE_CASES) {
    try {
      parseInvocation(c.argv, TABLE, BACKENDS);
    } catch (err) {
      const { message, hint } = err as Error & { hint?: string };
      for (const text of [message, hint ?? ""]) {
        assert.ok(!text.includes("\n"), `one line: ${JSON.stringify(text)}`);
        assert.ok(!text.endsWith("."), `no final period: ${JSON.stringify(text)}`);
        assert.ok(!/'--|parseArgs|ERR_/.test(text), `no parser text: ${JSON.stringify(text)}`);
      }
    }
  }
});

Deno.test("parseInvocation() drops a leading --, as npm and deno task pass it on", () => {
  assert.equal(helps(["--", "--help"]), usageText(TABLE, BACKENDS));
  assert.deepEqual(runs(["--", "close", "%3"]).invocation.positionals, ["%3"]);
  // Only a leading one: later, -- still ends the flags.
  assert.deepEqual(runs(["close", "--", "-5"]).invocation.positionals, ["-5"]);
});

Deno.test("commandNamed() finds the command of an argv that does not parse", () => {
  assert.equal(commandNamed(["close", "--bogus"], TABLE)?.name, "close");
  assert.equal(commandNamed(["--", "--config", "/c", "demo", "--x"], TABLE)?.name, "demo");
  assert.equal(commandNamed(["--bogus"], TABLE), undefined);
  assert.equal(commandNamed(["bogus"], TABLE), undefined);
});

Deno.test("parseInvocation() gives a usage error a hint naming the command's help", () => {
  assert.throws(() => parseInvocation(["close", "%1", "--nope"], TABLE, BACKENDS), {
    code: "usage",
    hint: "Run `muxbridge close --help` for its flags",
  });
  assert.throws(() => parseInvocation(["close"], TABLE, BACKENDS), {
    code: "usage",
    hint: "Usage: muxbridge close PANE_ID [--force]",
  });
});

// ---------------------------------------------------------------- help and version

Deno.test("parseInvocation() runs version for --version", () => {
  assert.deepEqual(runs(["--version"]), {
    name: "version",
    invocation: { values: {}, positionals: [], global: { json: false } },
  });
  assert.deepEqual(runs(["--version", "--json"]).invocation.global, { json: true });
});

Deno.test("parseInvocation() shows the command list for --help and -h", () => {
  for (const argv of [["--help"], ["-h"], ["--config", "/c.json", "--help"]]) {
    const text = helps(argv);
    assert.equal(text, usageText(TABLE, BACKENDS));
    for (const c of TABLE) assert.match(text, new RegExp(`^  ${c.name} +${c.summary}$`, "m"));
    assert.match(text, /--config FILE/);
    assert.match(text, /Exit codes: 0 ok, 1 failed, 2 usage, 3 environment/);
  }
});

Deno.test("parseInvocation() shows a command's help for cmd --help, before checking its arguments", () => {
  assert.equal(helps(["close", "--help"]), commandHelp(TABLE[1]));
  assert.equal(helps(["--help", "close"]), commandHelp(TABLE[1]));
  assert.equal(helps(["close", "-h"]), commandHelp(TABLE[1]));
  // Missing PANE_ID does not stop --help.
  assert.match(helps(["close", "--help"]), /^Usage: muxbridge close PANE_ID \[--force\]$/m);
});

Deno.test("commandHelp() lists the command's flags and --json only where it has JSON", () => {
  const spawn = commandHelp(TABLE[0]);
  // A string flag takes the name its usage line gives it (`--session ID`), else VALUE.
  for (const flag of ["--session ID", "--url URL", "--dir DIR", "--title T", "--json"]) {
    assert.ok(spawn.includes(flag), flag);
  }
  assert.ok(!commandHelp(TABLE[3]).includes("--json"));
  assert.ok(commandHelp(TABLE[1]).includes("  --force  Any pane"));
});

/** The column each line of a help section's list starts its description at. */
function descriptionColumns(text: string, heading: string): number[] {
  const lines = text.split("\n");
  const from = lines.indexOf(heading) + 1;
  assert.ok(from > 0, `help has "${heading}"`);
  const rows = lines.slice(from, lines.indexOf("", from));
  assert.ok(rows.length > 0, `"${heading}" lists something`);
  return rows.map((l) => {
    const m = /^ {2}(\S+(?: \S+)*?)( {2,})\S/.exec(l);
    assert.ok(m, `a row of two columns: ${JSON.stringify(l)}`);
    return 2 + m[1].length + m[2].length;
  });
}

Deno.test("usageText() aligns the commands and the global flags, each in one column", () => {
  const text = usageText(COMMANDS, BACKENDS);
  for (const heading of ["Commands:", "Global flags:"]) {
    assert.equal(new Set(descriptionColumns(text, heading)).size, 1, heading);
  }
  assert.match(text, /^ {2}-h, --help +Show help$/m);
  assert.match(text, /^ {2}--log-level LEVEL +Log level: debug\|info\|warn\|error$/m);
  assert.match(text, /^ {2}--backend NAME +Backend: auto\|none\|tmux\|/m);
});

Deno.test("commandHelp() aligns each real command's flags, --json included", () => {
  for (const c of COMMANDS) {
    const text = commandHelp(c);
    if (!text.includes("\nFlags:\n")) continue;
    assert.equal(new Set(descriptionColumns(text, "Flags:")).size, 1, c.name);
    // Every string flag's value is named by the usage line, never the VALUE fallback.
    assert.ok(!text.includes(" VALUE "), `${c.name}: ${text}`);
  }
});

// ---------------------------------------------------------------- did you mean

Deno.test("parseInvocation() suggests the command or flag a typo meant, in the hint", () => {
  const cases: Array<{ argv: string[]; message: string; hint: string }> = [
    {
      argv: ["lsit"],
      message: 'Cannot run unknown command "lsit"',
      hint: 'Did you mean "list"?',
    },
    {
      argv: ["--json", "doctr", "--url", "http://h:1"],
      message: 'Cannot run unknown command "doctr"',
      hint: 'Did you mean "doctor"?',
    },
    {
      argv: ["frobnicate"],
      message: 'Cannot run unknown command "frobnicate"',
      hint: "Run `muxbridge --help` for the list",
    },
    {
      argv: ["list", "--jsn"],
      message: 'Cannot run list: unknown flag "--jsn"',
      hint: 'Did you mean "--json"?',
    },
    {
      argv: ["cleanup", "--dryrun"],
      message: 'Cannot run cleanup: unknown flag "--dryrun"',
      hint: 'Did you mean "--dry-run"?',
    },
    {
      argv: ["--verison"],
      message: 'Cannot run muxbridge: unknown flag "--verison"',
      hint: 'Did you mean "--version"?',
    },
    {
      argv: ["-v"],
      message: 'Cannot run muxbridge: unknown flag "-v"',
      hint: 'Did you mean "--version"?',
    },
    {
      argv: ["close", "%1", "-f"],
      message: 'Cannot run close: unknown flag "-f"',
      hint: 'Did you mean "--force"?',
    },
    {
      // -l: --log-level or --log-file; no guess.
      argv: ["list", "-l"],
      message: 'Cannot run list: unknown flag "-l"',
      hint: "Run `muxbridge list --help` for its flags",
    },
    {
      // A flag of another command is no typo of this one's.
      argv: ["list", "--force"],
      message: 'Cannot run list: unknown flag "--force"',
      hint: "Run `muxbridge list --help` for its flags",
    },
  ];
  for (const c of cases) {
    assert.throws(() => parseInvocation(c.argv, COMMANDS, BACKENDS), (err: Error) => {
      const e = err as Error & { code?: string; hint?: string };
      assert.equal(e.code, "usage", c.argv.join(" "));
      assert.equal(e.message, c.message, c.argv.join(" "));
      assert.equal(e.hint, c.hint, c.argv.join(" "));
      return true;
    });
  }
});

// ---------------------------------------------------------------- the real command table

Deno.test("parseInvocation() knows every command of the contract", () => {
  const names = COMMANDS.map((c) => c.name).sort();
  assert.deepEqual(names, [
    "bridge",
    "cleanup",
    "close",
    "demo",
    "detect",
    "doctor",
    "install",
    "layout",
    "list",
    "schema",
    "spawn",
    "uninstall",
    "version",
  ]);
  for (const c of COMMANDS) {
    assert.equal(helps([c.name, "--help"], COMMANDS), commandHelp(c), c.name);
  }
});

Deno.test("parseInvocation() accepts --json exactly on the real commands that have JSON output", () => {
  // Contract: every command but bridge (NDJSON) and demo has --json output.
  for (const c of COMMANDS) {
    const argv = [c.name, ...(c.positionals[0] === 1 ? ["x"] : []), "--json"];
    if (c.name === "bridge" || c.name === "demo") usage(argv, /--json/, COMMANDS);
    else assert.equal(runs(argv, COMMANDS).invocation.global.json, true, c.name);
  }
});

Deno.test("parseInvocation() parses the contract's examples with the real table", () => {
  assert.deepEqual(
    runs(
      [
        "spawn",
        "--session",
        "ses_1",
        "--url",
        "http://127.0.0.1:4096",
        "--dir",
        "/p",
        "--title",
        "T",
      ],
      COMMANDS,
    ).invocation.values,
    { session: "ses_1", url: "http://127.0.0.1:4096", dir: "/p", title: "T" },
  );
  assert.equal(runs(["close", "%3", "--force"], COMMANDS).invocation.values.force, true);
  assert.deepEqual(runs(["layout", "tiled"], COMMANDS).invocation.positionals, ["tiled"]);
  assert.equal(
    runs(["cleanup", "--dry-run", "--all"], COMMANDS).invocation.values["dry-run"],
    true,
  );
  assert.equal(
    runs(["bridge", "--url", "http://h:1", "--dir", "/d"], COMMANDS).invocation.values.url,
    "http://h:1",
  );
});
