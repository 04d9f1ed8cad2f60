/**
 * Black-box tests of the CLI: the real entry point as a child process; stdout, stderr and the
 * exit code asserted separately.
 */

import assert from "node:assert/strict";
import { type CliRun, runCli } from "./helpers/cli_process.ts";
import { startTmuxServer } from "./helpers/tmux_server.ts";
import { writeStandIn } from "./helpers/stand_in.ts";
import { serveFakeOpencode } from "./helpers/fake_opencode_server.ts";

type CliResult = CliRun;

function cli(args: string[], env: Record<string, string> = {}): Promise<CliResult> {
  return runCli(args, { env: { HOME: "/nonexistent-home", ...env } });
}

/** Every failure prints exactly one line on stderr and nothing (or JSON) on stdout. */
function assertOneLineError(r: CliResult, code: number, mention?: string | RegExp): void {
  assert.equal(r.code, code, `exit code (stderr: ${r.stderr})`);
  assert.equal(r.stdout, "");
  assert.equal(
    r.stderr.trimEnd().split("\n").length,
    1,
    `one stderr line, got ${JSON.stringify(r.stderr)}`,
  );
  assert.ok(r.stderr.startsWith("muxbridge: "));
  if (mention) {
    assert.match(
      r.stderr,
      typeof mention === "string"
        ? new RegExp(mention.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
        : mention,
    );
  }
}

Deno.test("cli --help prints usage on stdout and exits 0", async () => {
  const r = await cli(["--help"]);
  assert.equal(r.code, 0);
  assert.equal(r.stderr, "");
  for (
    const c of [
      "bridge",
      "detect",
      "spawn",
      "close",
      "layout",
      "list",
      "cleanup",
      "doctor",
      "schema",
      "demo",
      "version",
    ]
  ) {
    assert.match(r.stdout, new RegExp(`\\n  ${c} `));
  }
});

Deno.test("cli <command> --help prints that command's usage and an example", async () => {
  const r = await cli(["close", "--help"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /Usage: muxbridge close PANE_ID/);
  assert.match(r.stdout, /Example:/);
});

Deno.test("cli usage errors exit 2 with one line on stderr, before anything is probed", async () => {
  assertOneLineError(await cli([]), 2, "without a command");
  assertOneLineError(await cli(["bogus"]), 2, "unknown command");
  assertOneLineError(await cli(["list", "--bogus"]), 2);
  const bridge = await cli(["bridge", "--json"]);
  assert.equal(bridge.code, 2);
  assert.deepEqual(bridge.stdout.trimEnd().split("\n").map((l) => JSON.parse(l).type), [
    "error",
    "bye",
  ]);
  assertOneLineError(await cli(["close"]), 2, "expected 1");
  assertOneLineError(await cli(["--backend", "screen", "list"]), 2, "--backend");
  assertOneLineError(await cli(["schema", "bogus"]), 2);
  assertOneLineError(await cli(["layout", "spiral"]), 2, "spiral");
  assertOneLineError(await cli(["layout", "tiled", "--main-size", "95"]), 2, "--main-size");
  assertOneLineError(await cli(["spawn", "--url", "http://x", "--dir", "/tmp"]), 2, "--session");
  assertOneLineError(
    await cli(["spawn", "--session", "ses_$(x)", "--url", "http://x", "--dir", "/tmp"]),
    2,
    "session id",
  );
  assertOneLineError(
    await cli(["spawn", "--session", "ses_a", "--url", "ftp://x", "--dir", "/tmp"]),
    2,
  );
  assertOneLineError(
    await cli(["spawn", "--session", "ses_a", "--url", "http://x", "--dir", "relative"]),
    2,
  );
  assertOneLineError(await cli(["close", "-rf"]), 2);
});

Deno.test("cli names the command or flag a typo meant: one stderr line, exit 2, nothing on stdout", async () => {
  const cases: Array<[string[], string]> = [
    [["lsit"], 'muxbridge: Cannot run unknown command "lsit". Did you mean "list"?\n'],
    [
      ["doctr", "--json"],
      'muxbridge: Cannot run unknown command "doctr". Did you mean "doctor"?\n',
    ],
    [
      ["list", "--jsn"],
      'muxbridge: Cannot run list: unknown flag "--jsn". Did you mean "--json"?\n',
    ],
    [
      ["--verison"],
      'muxbridge: Cannot run muxbridge: unknown flag "--verison". Did you mean "--version"?\n',
    ],
    [
      ["frobnicate"],
      'muxbridge: Cannot run unknown command "frobnicate". Run `muxbridge --help` for the list\n',
    ],
  ];
  for (const [argv, stderr] of cases) {
    const r = await cli(argv);
    assert.deepEqual({ code: r.code, stdout: r.stdout, stderr: r.stderr }, {
      code: 2,
      stdout: "",
      stderr,
    }, argv.join(" "));
  }
});

Deno.test("cli --help lines the global flags up in one column", async () => {
  const r = await cli(["--help"]);
  assert.equal(r.code, 0);
  const lines = r.stdout.split("\n");
  const from = lines.indexOf("Global flags:") + 1;
  const flags = lines.slice(from, lines.indexOf("", from));
  assert.deepEqual(flags.map((l) => l.trim().split(/ {2,}/)[0]), [
    "--config FILE",
    "--backend NAME",
    "--log-level LEVEL",
    "--log-file FILE",
    "-h, --help",
    "--version",
  ]);
  const column = (l: string) =>
    l.length - l.trimStart().length + /^\S.*?\S {2,}/.exec(l.trimStart())![0].length;
  assert.equal(new Set(flags.map(column)).size, 1, flags.join("\n"));
});

Deno.test("cli list with no records says so on stdout, and --json prints []", async () => {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-e2e-list-" });
  try {
    const env = { HOME: dir, MUXBRIDGE_STATE_DIR: `${dir}/state` };
    assert.deepEqual(await cli(["list"], env), { code: 0, stdout: "no owned panes\n", stderr: "" });
    assert.deepEqual(await cli(["list", "--json"], env), { code: 0, stdout: "[]\n", stderr: "" });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli version and --version print the version; --json adds protocol and runtime", async () => {
  const denoConfig = JSON.parse(await Deno.readTextFile(new URL("../deno.json", import.meta.url)));
  assert.equal((await cli(["version"])).stdout, `muxbridge ${denoConfig.version}\n`);
  assert.equal((await cli(["--version"])).stdout, `muxbridge ${denoConfig.version}\n`);
  const json = JSON.parse((await cli(["version", "--json"])).stdout);
  assert.equal(json.name, "muxbridge");
  assert.equal(json.protocol, 1);
  assert.equal(json.version, denoConfig.version);
  assert.equal(typeof json.runtime, "string");
});

Deno.test("cli detect reports every layer, the innermost first, and exits 0 when none is found", async () => {
  const none = JSON.parse((await cli(["detect", "--json"])).stdout);
  assert.deepEqual(none, { backend: null, layers: [], harness: { name: null } });
  const r = await cli(["detect", "--json"], {
    TMUX: "/tmp/tmux-0/default,10615,0",
    TMUX_PANE: "%3",
    KITTY_WINDOW_ID: "1",
    KITTY_PID: "99",
    CLAUDE_CODE_SESSION_ID: "abc",
  });
  assert.equal(r.code, 0);
  const id = JSON.parse(r.stdout);
  assert.equal(id.backend, "tmux");
  assert.deepEqual(id.layers.map((l: { backend: string }) => l.backend), ["tmux", "kitty"]);
  assert.equal(id.layers[0].paneId, "%3");
  assert.equal(id.harness.name, "claude-code");
});

Deno.test("cli schema prints JSON Schema for the config, the protocol and the provider protocol", async () => {
  const config = JSON.parse((await cli(["schema", "config"])).stdout);
  assert.equal(config.additionalProperties, false);
  assert.equal(config.properties.main_pane_size.default, 60);
  const protocol = JSON.parse((await cli(["schema", "protocol"])).stdout);
  assert.ok(JSON.stringify(protocol).includes("pane.skipped"));
  const provider = JSON.parse((await cli(["schema", "provider"])).stdout);
  assert.ok(JSON.stringify(provider).includes("pane-provider protocol 1"));
});

Deno.test("cli environment errors exit 3: missing named config, bad config key, no multiplexer", async () => {
  assertOneLineError(
    await cli(["--config", "/nonexistent/muxbridge.json", "list"]),
    3,
    "does not exist",
  );
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      `${dir}/c.json`,
      JSON.stringify({ main_pane_size: 60, tmux: { sockett: "x" } }),
    );
    assertOneLineError(await cli(["--config", `${dir}/c.json`, "list"]), 3, "tmux.sockett");
    await Deno.writeTextFile(`${dir}/bad.json`, "{ not json");
    assertOneLineError(
      await cli(["list"], { MUXBRIDGE_CONFIG: `${dir}/bad.json` }),
      3,
      "not valid JSON",
    );
    assertOneLineError(
      await cli(["spawn", "--session", "ses_a", "--url", "http://127.0.0.1:1", "--dir", dir], {
        HOME: dir,
      }),
      3,
      "No supported multiplexer",
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("cli spawn, list, layout, close and cleanup on a private tmux server", async () => {
  const server = await startTmuxServer();
  const opencode = serveFakeOpencode();
  opencode.fake.knowAll = true;
  try {
    const standIn = await writeStandIn(server.dir);
    const fakeOpencode = `${server.dir}/opencode-version`;
    await Deno.writeTextFile(fakeOpencode, "#!/bin/sh\necho 1.18.33\n");
    await Deno.chmod(fakeOpencode, 0o755);
    const config = `${server.dir}/config.json`;
    const write = (bin: string) =>
      Deno.writeTextFile(
        config,
        JSON.stringify({
          backend: "tmux",
          tmux: { socket_name: server.socketName, target: server.anchorPane },
          opencode_bin: bin,
          close_grace_ms: 500,
        }),
      );
    await write(standIn);
    const env = {
      ...server.env,
      MUXBRIDGE_CONFIG: config,
      MUXBRIDGE_STATE_DIR: `${server.dir}/state`,
    };

    const spawned = await cli([
      "spawn",
      "--session",
      "ses_cli1",
      "--url",
      `${opencode.url}/`,
      "--dir",
      server.dir,
      "--title",
      "cli pane",
      "--json",
    ], env);
    assert.equal(spawned.code, 0, spawned.stderr);
    const { paneId, backend, sessionId } = JSON.parse(spawned.stdout);
    assert.deepEqual([backend, sessionId], ["tmux", "ses_cli1"]);
    assert.match(paneId, /^%\d+$/);

    const listed = JSON.parse((await cli(["list", "--json"], env)).stdout);
    assert.equal(listed.length, 1);
    assert.equal(listed[0].owner, "cli");
    assert.equal(listed[0].title, "cli pane");

    const layout = await cli(["layout", "main-horizontal", "--main-size", "50", "--json"], env);
    assert.equal(layout.code, 0, layout.stderr);
    assert.equal(JSON.parse(layout.stdout).applied, true);

    const userPane = await server.userPane();
    assertOneLineError(await cli(["close", userPane], env), 1, "did not open");
    assert.ok(
      (await server.run(["list-panes", "-t", userPane])).code === 0,
      "the user's pane is untouched",
    );
    const forced = await cli(["close", userPane, "--force", "--json"], env);
    assert.equal(forced.code, 0, forced.stderr);

    const closed = JSON.parse((await cli(["close", paneId, "--json"], env)).stdout);
    assert.deepEqual(closed, { paneId, closed: true, alreadyGone: false });
    const again = JSON.parse((await cli(["close", paneId, "--json"], env)).stdout);
    assert.deepEqual(again, { paneId, closed: true, alreadyGone: true });
    assert.deepEqual(JSON.parse((await cli(["list", "--json"], env)).stdout), []);

    // cleanup keeps `cli` panes unless --all, and closes them when the server does not answer.
    const second = JSON.parse(
      (await cli([
        "spawn",
        "--session",
        "ses_cli2",
        "--url",
        opencode.url,
        "--dir",
        server.dir,
        "--json",
      ], env)).stdout,
    );
    await opencode.down();
    const dry = JSON.parse((await cli(["cleanup", "--json"], env)).stdout);
    assert.deepEqual(dry.closed, []);
    assert.equal(dry.kept[0].paneId, second.paneId);
    const all = JSON.parse((await cli(["cleanup", "--all", "--json"], env)).stdout);
    assert.equal(all.closed[0].paneId, second.paneId);
    assert.match(all.closed[0].reason, /unreachable/);
    assert.notEqual(
      (await server.run(["list-panes", "-t", second.paneId])).code,
      0,
      "the pane is gone",
    );

    await write(fakeOpencode);
    const doctor = await cli(["doctor", "--json"], env);
    const checks = JSON.parse(doctor.stdout).checks as Array<{ name: string; status: string }>;
    assert.equal(doctor.code, 0, JSON.stringify(checks));
    assert.ok(checks.some((c) => c.name === "backend" && c.status === "pass"));
  } finally {
    await opencode.close();
    await server.close();
  }
});

Deno.test("cli spawn and close work with no UTF-8 locale and outside tmux (tmux would print \\x1f as _)", async () => {
  // A tmux client whose LC_ALL/LC_CTYPE/LANG do not say UTF-8, and that does not run inside tmux
  // (TMUX unset: even an empty TMUX makes tmux 3.3a assume UTF-8), prints control and non-ASCII
  // characters as "_" unless given -u: every pane open then failed with unparseable_output.
  const server = await startTmuxServer();
  const opencode = serveFakeOpencode();
  opencode.fake.knowAll = true;
  try {
    const config = `${server.dir}/config.json`;
    await Deno.writeTextFile(
      config,
      JSON.stringify({
        backend: "tmux",
        tmux: { socket_name: server.socketName, target: server.anchorPane },
        opencode_bin: await writeStandIn(server.dir),
      }),
    );
    // Only what runCli adds (PATH) and these: no TMUX, TMUX_PANE, LANG, LC_ALL or LC_CTYPE.
    const env = {
      HOME: server.env.HOME,
      TMUX_TMPDIR: server.env.TMUX_TMPDIR,
      MUXBRIDGE_CONFIG: config,
      MUXBRIDGE_STATE_DIR: `${server.dir}/state`,
    };
    const title = "réview ünïcode";
    const spawned = await cli([
      "spawn",
      "--session",
      "ses_nolocale",
      "--url",
      opencode.url,
      "--dir",
      server.dir,
      "--title",
      title,
      "--json",
    ], env);
    assert.equal(spawned.code, 0, spawned.stderr);
    const { paneId } = JSON.parse(spawned.stdout);
    assert.equal(
      (await server.tmux(["display-message", "-p", "-t", paneId, "#{pane_title}"])).trim(),
      title,
      "the title arrives intact",
    );
    const closed = await cli(["close", paneId, "--json"], env);
    assert.equal(closed.code, 0, closed.stderr);
    assert.deepEqual(JSON.parse(closed.stdout), { paneId, closed: true, alreadyGone: false });
  } finally {
    await opencode.close();
    await server.close();
  }
});

Deno.test("cli doctor fails with a hint when the server URL does not answer", async () => {
  const r = await cli(["doctor", "--url", "http://127.0.0.1:9", "--json"], {
    MUXBRIDGE_BACKEND: "none",
  });
  assert.equal(r.code, 1);
  const checks = JSON.parse(r.stdout).checks as Array<
    { name: string; status: string; hint?: string }
  >;
  const health = checks.find((c) => c.name === "server health");
  assert.equal(health?.status, "fail");
  assert.match(health?.hint ?? "", /--port/);
});
