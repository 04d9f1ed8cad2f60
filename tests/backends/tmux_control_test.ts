/**
 * The tmux control-mode channel: the output parser, the request/answer pairing, tmux
 * command-language quoting (a property test against the real tmux), and how the command layer
 * picks a transport, hides credentials from argv and falls back to one process per command.
 */

import assert from "node:assert/strict";
import { createTmuxBackend } from "../../backends/tmux.ts";
import {
  commandLine,
  createTmuxCommand,
  quoteArgument,
  redactArgs,
} from "../../backends/tmux/_command.ts";
import { connectControl, ControlParser } from "../../backends/tmux/_control.ts";
import type { BackendDeps } from "../../lib/backend.ts";
import type { ChannelOpener } from "../../lib/sys/channel.ts";
import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { resolveConfig } from "../../lib/config.ts";
import { isMuxError, type MuxError } from "../../lib/sys/errors.ts";
import type { Runner } from "../../lib/sys/exec.ts";
import { createLogger, silentLogger } from "../../lib/sys/log.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { createFakeChannels, tmuxLike } from "../fakes/fake_channel.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { createFakeRunner } from "../fakes/fake_runner.ts";
import { createRandom, hostileString } from "../helpers/hostile.ts";
import { recordedLaunches, writeStandIn } from "../helpers/stand_in.ts";
import { startTmuxServer, type TmuxServer } from "../helpers/tmux_server.ts";

const clock = createRealClock();

// ------------------------------------------------------------------ parser

Deno.test("ControlParser pairs %begin with the %end of the same number and passes other lines as output", () => {
  const p = new ControlParser();
  assert.equal(p.feed("%begin 17 5 1"), null);
  assert.equal(p.feed("%end 17 4 1"), null, "another number's guard is output");
  assert.equal(p.feed("line"), null);
  assert.deepEqual(p.feed("%end 17 5 1"), {
    kind: "block",
    block: { number: "5", flags: "1", ok: true, lines: ["%end 17 4 1", "line"] },
  });
  p.feed("%begin 18 6 1");
  p.feed("can't find pane: %9");
  assert.deepEqual(p.feed("%error 18 6 1"), {
    kind: "block",
    block: { number: "6", flags: "1", ok: false, lines: ["can't find pane: %9"] },
  });
  assert.deepEqual(p.feed("%layout-change @0 x y *"), {
    kind: "notification",
    line: "%layout-change @0 x y *",
  });
  assert.deepEqual(p.feed("%exit"), { kind: "exit", reason: "" });
  assert.deepEqual(p.feed("%exit detached"), { kind: "exit", reason: "detached" });
});

// ------------------------------------------------------------------ quoting

Deno.test("quoteArgument() leaves plain words bare and double-quotes everything else on one line", () => {
  assert.equal(quoteArgument("split-window"), "split-window");
  assert.equal(quoteArgument("-d"), "-d");
  assert.equal(quoteArgument("--"), "--");
  assert.equal(quoteArgument("%3"), '"%3"');
  assert.equal(quoteArgument(""), '""');
  assert.equal(quoteArgument("a;"), '"a;"');
  assert.equal(quoteArgument('$HOME ~ "x" \\'), '"\\$HOME \\~ \\"x\\" \\\\"');
  assert.equal(quoteArgument("a\nb\r\t\x1b\x01\x7f"), '"a\\nb\\r\\t\\e\\001\\177"');
  assert.equal(quoteArgument("é\u202e\u{1f600}"), '"é\u202e\u{1f600}"');
  const r = createRandom(7);
  for (let i = 0; i < 2000; i++) {
    const q = quoteArgument(hostileString(r));
    assert.ok(!/[\n\r\0]/.test(q), "always one line");
  }
});

Deno.test("quoteArgument() refuses a NUL and a lone surrogate", () => {
  for (const bad of ["a\0b", "x\ud800", "\udc00"]) {
    assert.throws(() => quoteArgument(bad), (e: MuxError) => e.code === "invalid_argument");
  }
});

Deno.test("redactArgs() hides every -e value and nothing else", () => {
  assert.deepEqual(
    redactArgs(["split-window", "-e", "OPENCODE_SERVER_PASSWORD=s3cr3t\nx", "-c", "/d", "-e"]),
    ["split-window", "-e", "OPENCODE_SERVER_PASSWORD=…", "-c", "/d", "-e"],
  );
  assert.equal(
    commandLine([["kill-pane", "-t", "%1"], ["display-message", "-p", "a b"]]),
    'kill-pane -t "%1" ; display-message -p "a b"',
  );
});

// ------------------------------------------------------------------ request pairing (fake)

function controlOptions(open: ChannelOpener, fake = createFakeClock()) {
  return { argv: ["tmux", "-C", "attach"], open, clock: fake, timeoutMs: 1000, log: silentLogger };
}

Deno.test("connectControl() pairs pipelined requests with their answers by sentinel", async () => {
  const fakes = createFakeChannels();
  const client = await connectControl(controlOptions(fakes.open));
  const ch = fakes.opened[0];
  assert.deepEqual(ch.written, [
    "display-message -p muxbridge-hello",
    "display-message -p muxbridge-sync-1",
  ]);
  const [a, b, c] = await Promise.all([
    client.request("display-message -p one ; display-message -p two"),
    client.request("fail here ; display-message -p never"),
    client.request("display-message -p three"),
  ]);
  assert.deepEqual(a, { ok: true, stdout: "one\ntwo\n", stderr: "" });
  assert.deepEqual(b, { ok: false, stdout: "", stderr: "failed: fail here" });
  assert.deepEqual(c, { ok: true, stdout: "three\n", stderr: "" });
  await client.close();
  assert.ok(ch.ended, "close ends the client's input");
  assert.equal(client.alive, false);
});

Deno.test("connectControl() ignores blocks tmux runs by itself (flags 0: attach, hooks)", async () => {
  const script = tmuxLike();
  const fakes = createFakeChannels((line) => {
    const out = script(line);
    // A hook after the command: its own block, flags 0, failing.
    return line.startsWith("split")
      ? [...out, "%begin 1 900 0", "can't find pane: %99", "%error 1 900 0", "%sessions-changed"]
      : out;
  });
  const client = await connectControl(controlOptions(fakes.open));
  assert.deepEqual(await client.request("split-window"), { ok: true, stdout: "", stderr: "" });
  assert.deepEqual(await client.request("display-message -p x"), {
    ok: true,
    stdout: "x\n",
    stderr: "",
  });
  await client.close();
});

Deno.test("connectControl() times out a request on the clock, kills the client, and answers null afterwards", async () => {
  const fake = createFakeClock();
  const fakes = createFakeChannels();
  const client = await connectControl(controlOptions(fakes.open, fake));
  const hung = client.request("hang");
  const rejected = assert.rejects(hung, (e: MuxError) => e.code === "timed_out");
  await fake.advance(999);
  assert.equal(fakes.opened[0].signals.length, 0);
  await fake.advance(1);
  await rejected;
  assert.deepEqual(fakes.opened[0].signals, ["SIGTERM"]);
  await fake.flush();
  assert.equal(client.alive, false);
  assert.equal(await client.request("display-message -p x"), null);
});

Deno.test("connectControl() drops the answer of an aborted request and keeps later ones paired", async () => {
  let hold: string[] = [];
  const script = tmuxLike();
  const fakes = createFakeChannels((line) => {
    if (line === "display-message -p slow") {
      hold = script(line);
      return [];
    }
    return script(line);
  });
  const client = await connectControl(controlOptions(fakes.open));
  const abort = new AbortController();
  const slow = client.request("display-message -p slow", abort.signal);
  const next = client.request("display-message -p next");
  abort.abort();
  await assert.rejects(slow, (e: MuxError) => e.code === "interrupted");
  // The slow answer and its sentinel arrive late, before the next request's.
  fakes.opened[0].emit(...hold);
  assert.deepEqual(await next, { ok: true, stdout: "next\n", stderr: "" });
  await client.close();
});

Deno.test("connectControl() answers null for requests in flight when the client exits", async () => {
  const fakes = createFakeChannels((line, ch) => {
    if (line.startsWith("kill-server")) queueMicrotask(() => ch.exit({ code: 0 }));
    return line.startsWith("kill-server") ? [] : tmuxLike()(line);
  });
  let died = "";
  const client = await connectControl({
    ...controlOptions(fakes.open),
    onDeath: (w) => (died = w),
  });
  assert.equal(await client.request("kill-server"), null);
  assert.equal(client.alive, false);
  assert.match(died, /exited 0/);
});

Deno.test("connectControl() fails with backend_unreachable when the client exits before answering", async () => {
  const fakes = createFakeChannels((_line, ch) => {
    queueMicrotask(() => ch.exit({ code: 1, stderr: "no server running on /tmp/x" }));
    return [];
  });
  await assert.rejects(
    connectControl(controlOptions(fakes.open)),
    (e: MuxError) => e.code === "backend_unreachable" && /no server running/.test(e.message),
  );
});

// ------------------------------------------------------------------ command layer (fakes)

function fakeDeps(run: Runner, open: ChannelOpener | undefined, control = true): BackendDeps {
  return {
    run,
    ...(open ? { openChannel: open } : {}),
    env: () => undefined,
    clock: createFakeClock(),
    config: resolveConfig({
      env: () => undefined,
      flags: { tmux: { socket_name: "s", target: "%0", control_mode: control } },
    }),
    identity: { backend: null, layers: [], harness: { name: null } },
    log: silentLogger,
  };
}

Deno.test("createTmuxCommand() attaches the control client to the target's session id, never to the pane", async () => {
  const runner = createFakeRunner().on(
    ["tmux", "-L", "s", "display-message", "-p", "-t", "%0", "#{session_id}"],
    { stdout: "$3\n" },
  );
  const fakes = createFakeChannels();
  const tmux = createTmuxCommand(fakeDeps(runner.run, fakes.open), { attachTarget: () => "%0" });
  const r = await tmux.run([["display-message", "-p", "hi"]]);
  assert.equal(r.stdout, "hi\n");
  assert.equal(tmux.transport(), "control");
  assert.deepEqual(fakes.opened[0].argv, [
    "tmux",
    "-L",
    "s",
    "-C",
    "attach-session",
    "-E",
    "-f",
    "no-output,ignore-size",
    "-t",
    "$3",
  ]);
  await tmux.close();
  assert.equal(runner.calls.length, 1, "one process for the session id, then none");
});

Deno.test("createTmuxCommand() does not repeat a split whose answer was lost, and repeats a listing", async () => {
  const runner = createFakeRunner()
    .on(["tmux", "-L", "s", "display-message", "-p", "-t", "%0", "#{session_id}"], {
      stdout: "$0\n",
    })
    .on(["tmux", "-L", "s", "list-panes", "-a"], { stdout: "via cli\n" });
  let die = true;
  const fakes = createFakeChannels((line, ch) => {
    if (die && (line.startsWith("split-window") || line.startsWith("list-panes"))) {
      queueMicrotask(() => ch.exit({ code: 0 }));
      return [];
    }
    return tmuxLike()(line);
  });
  const tmux = createTmuxCommand(fakeDeps(runner.run, fakes.open), { attachTarget: () => "%0" });
  await assert.rejects(
    tmux.run([["split-window", "-d", "-t", "%0"]]),
    (e: MuxError) => e.code === "command_failed" && /control channel ended/.test(e.message),
  );
  assert.ok(!runner.calls.some((c) => c.argv.includes("split-window")), "no second split");
  // The listing is repeated: on a reconnected channel, which dies too, then by a tmux process.
  const listed = await tmux.run([["list-panes", "-a"]]);
  assert.equal(listed.stdout, "via cli\n");
  assert.equal(fakes.opened.length, 2, "one reconnect, then no more channels");
  assert.equal(tmux.transport(), "cli");
  die = false;
  await tmux.run([["list-panes", "-a"]]);
  assert.equal(fakes.opened.length, 2, "stays on processes for good");
  await tmux.close();
});

Deno.test("createTmuxCommand() detaches the channel before a command that ends panes, and reattaches for the next split", async () => {
  const runner = createFakeRunner()
    .on(["tmux", "-L", "s", "display-message", "-p", "-t", "%0", "#{session_id}"], {
      stdout: "$0\n",
    })
    .on(["tmux", "-L", "s", "send-keys", "-t", "%1", "C-c"], {})
    .on(["tmux", "-L", "s", "list-panes", "-t", "%1"], {});
  const fakes = createFakeChannels();
  const tmux = createTmuxCommand(fakeDeps(runner.run, fakes.open), { attachTarget: () => "%0" });
  await tmux.run([["list-panes", "-t", "%1"]]);
  assert.equal(tmux.transport(), "control");
  await tmux.run([["send-keys", "-t", "%1", "C-c"]]);
  assert.ok(fakes.opened[0].ended, "detached before the interrupt");
  assert.equal(tmux.transport(), "cli");
  await tmux.run([["list-panes", "-t", "%1"]]);
  assert.equal(fakes.opened.length, 1, "stays detached while panes may be ending");
  await tmux.run([["split-window", "-d", "-t", "%0"]]);
  assert.equal(fakes.opened.length, 2, "a split attaches again");
  assert.equal(tmux.transport(), "control");
  assert.deepEqual(
    runner.calls.map((c) => c.argv[3]),
    ["display-message", "send-keys", "list-panes"],
    "the session id is asked once",
  );
  await tmux.close();
});

Deno.test("createTmuxCommand() detaches an idle channel after a second on the clock", async () => {
  const runner = createFakeRunner().on(
    ["tmux", "-L", "s", "display-message", "-p", "-t", "%0", "#{session_id}"],
    { stdout: "$0\n" },
  );
  const fakes = createFakeChannels();
  const deps = fakeDeps(runner.run, fakes.open);
  const clock = deps.clock as ReturnType<typeof createFakeClock>;
  const tmux = createTmuxCommand(deps, { attachTarget: () => "%0" });
  await tmux.run([["display-message", "-p", "x"]]);
  await clock.advance(999);
  assert.equal(tmux.transport(), "control");
  await clock.advance(1);
  await clock.flush();
  assert.equal(tmux.transport(), "cli");
  assert.ok(fakes.opened[0].ended);
  assert.equal(clock.pending(), 0, "no timer is left behind");
  await tmux.close();
});

Deno.test("createTmuxCommand() sends -e values on stdin (source-file -), never on argv, and redacts them in errors", async () => {
  const secret = "pa ss'wo\"rd $(x)\n";
  const runner = createFakeRunner().onPrefix(["tmux", "-L", "s", "source-file", "-"], {
    code: 1,
    stderr: "no space for new pane\n",
  });
  const tmux = createTmuxCommand(fakeDeps(runner.run, undefined), {});
  const r = await tmux.run([[
    "split-window",
    "-e",
    `OPENCODE_SERVER_PASSWORD=${secret}`,
    "--",
    "x",
  ]]);
  const call = runner.calls[0];
  assert.deepEqual(call.argv, ["tmux", "-L", "s", "source-file", "-"]);
  assert.equal(
    call.opts.stdin,
    'split-window -e "OPENCODE_SERVER_PASSWORD=pa ss\'wo\\"rd \\$(x)\\n" -- x\n',
  );
  assert.equal(r.code, 1);
  assert.ok(!JSON.stringify(r.argv).includes("wo"), "the shown argv holds no secret");
  assert.deepEqual(r.argv.slice(3), [
    "split-window",
    "-e",
    "OPENCODE_SERVER_PASSWORD=…",
    "--",
    "x",
  ]);
});

Deno.test("createTmuxCommand() uses processes when control_mode is off or no channel seam is given", async () => {
  for (const [open, control] of [[createFakeChannels().open, false], [undefined, true]] as const) {
    const runner = createFakeRunner().on(["tmux", "-L", "s", "kill-pane", "-t", "%1"], {});
    const tmux = createTmuxCommand(fakeDeps(runner.run, open, control), {
      attachTarget: () => "%0",
    });
    await tmux.run([["kill-pane", "-t", "%1"]]);
    assert.equal(tmux.transport(), "cli");
    assert.equal(runner.calls.length, 1);
    await tmux.close();
  }
});

// ------------------------------------------------------------------ real tmux

function realDeps(server: TmuxServer, log = silentLogger, extra: Record<string, unknown> = {}) {
  return {
    run: server.runner,
    openChannel: server.openChannel,
    env: () => undefined,
    clock,
    config: resolveConfig({
      env: () => undefined,
      flags: {
        tmux: {
          socket_name: server.socketName,
          target: server.anchorPane,
          control_mode: true,
          ...extra,
        },
      },
    }),
    identity: { backend: null, layers: [], harness: { name: null } },
    log,
  } satisfies BackendDeps;
}

async function launchesIn(dir: string, n: number) {
  assert.ok(
    await waitFor(clock, async () => (await recordedLaunches(dir)).length >= n, {
      deadline: clock.now() + 10_000,
      maxIntervalMs: 50,
    }),
    `${n} launches recorded in ${dir}`,
  );
  return await recordedLaunches(dir);
}

Deno.test("quoteArgument() round-trips hostile values through real tmux: control mode and source-file", async () => {
  const r = createRandom();
  console.log(`quoting property test seed: ${r.seed} (replay: MUXBRIDGE_SEED=${r.seed})`);
  const server = await startTmuxServer();
  try {
    const tmux = createTmuxCommand(realDeps(server), { attachTarget: () => server.anchorPane });
    const cli = createTmuxCommand(realDeps(server, silentLogger, { control_mode: false }));
    for (const [name, cmd] of [["control", tmux], ["source-file", cli]] as const) {
      for (let batch = 0; batch < 3; batch++) {
        const dir = await Deno.makeTempDir({ dir: server.dir });
        const standIn = await writeStandIn(dir);
        const values = Array.from({ length: 40 }, () => hostileString(r));
        const password = hostileString(r);
        // -e forces source-file on the process path; the control path quotes the same way.
        const run = await cmd.run([[
          "split-window",
          "-d",
          "-P",
          "-F",
          "#{pane_id}",
          "-t",
          server.anchorPane,
          "-e",
          `OPENCODE_SERVER_PASSWORD=${password}`,
          "--",
          standIn,
          ...values,
        ]]);
        assert.equal(run.code, 0, `${name}: ${run.stderr}`);
        if (name === "control") assert.equal(cmd.transport(), "control");
        const [launch] = await launchesIn(dir, 1);
        assert.deepEqual(launch.argv, values, `${name} argv, seed ${r.seed}`);
        assert.equal(launch.password, password, `${name} -e value, seed ${r.seed}`);
        await server.run(["kill-pane", "-t", run.stdout.trim()]);
      }
    }
    await tmux.close();
  } finally {
    await server.close();
  }
});

Deno.test("tmux backend over control mode: no process per command, no secret on any argv, user's focus kept", async () => {
  const server = await startTmuxServer();
  try {
    const argvs: string[][] = [];
    const deps = realDeps(server);
    const run: Runner = (argv, opts) => {
      argvs.push([...argv]);
      return server.runner(argv, opts);
    };
    const open: ChannelOpener = (argv, opts) => {
      argvs.push([...argv]);
      return server.openChannel(argv, opts);
    };
    // The user works in a second window: attaching must not switch back to the anchor's.
    await server.tmux(["new-window", "-t", "t:", "sleep", "100000"]);
    const activeBefore = await server.tmux(["display-message", "-p", "-t", "t", "#{window_id}"]);
    const backend = createTmuxBackend({ ...deps, run, openChannel: open });
    await backend.probe();
    const dir = await Deno.makeTempDir({ dir: server.dir });
    const standIn = await writeStandIn(dir);
    const secret = "s3cr3t-'$(x)\"";
    const before = argvs.length;
    const { paneId, pid } = await backend.spawn({
      sessionId: "ses_ctl",
      title: "ctl",
      argv: [standIn, "attach"],
      cwd: dir,
      env: { OPENCODE_SERVER_PASSWORD: secret },
      owner: "cli",
    });
    const [launch] = await launchesIn(dir, 1);
    assert.equal(launch.password, secret);
    assert.equal(argvs.length - before, 0, "the spawn started no process");
    assert.ok(!argvs.flat().some((a) => a.includes("s3cr3t")), "the secret is on no argv");
    const clients = await server.tmux(["list-clients", "-F", "#{client_control_mode}"]);
    assert.equal(clients.trim(), "1", "one control client");
    assert.equal(
      await server.tmux(["display-message", "-p", "-t", "t", "#{window_id}"]),
      activeBefore,
      "the session's current window did not change",
    );
    const { closePane } = await import("../../lib/session/close_pane.ts");
    await closePane(backend, paneId, { graceMs: 500, clock, pid, processes: createProcesses() });
    assert.equal(await backend.inspect(paneId), null);
    await backend.dispose?.();
    assert.ok(
      await waitFor(
        clock,
        async () => (await server.tmux(["list-clients", "-F", "x"])).trim() === "",
        { deadline: clock.now() + 3000 },
      ),
      "dispose detaches the control client",
    );
  } finally {
    await server.close();
  }
});

Deno.test("tmux control channel killed twice: reconnects once, then one process per command, and says so", async () => {
  const server = await startTmuxServer();
  try {
    const lines: string[] = [];
    const log = createLogger("debug", (l) => lines.push(l));
    const tmux = createTmuxCommand(realDeps(server, log), {
      attachTarget: () => server.anchorPane,
    });
    const killClient = async () => {
      const pid = Number(
        (await server.tmux(["list-clients", "-F", "#{client_pid}"])).trim().split("\n")[0],
      );
      Deno.kill(pid, "SIGKILL");
      assert.ok(
        await waitFor(clock, () => tmux.transport() === "cli", { deadline: clock.now() + 3000 }),
      );
    };
    assert.equal((await tmux.run([["display-message", "-p", "a"]])).stdout, "a\n");
    assert.equal(tmux.transport(), "control");
    await killClient();
    assert.equal((await tmux.run([["display-message", "-p", "b"]])).stdout, "b\n");
    assert.equal(tmux.transport(), "control", "reconnected");
    await killClient();
    assert.equal((await tmux.run([["display-message", "-p", "c"]])).stdout, "c\n");
    assert.equal(tmux.transport(), "cli", "fell back to processes");
    assert.ok(
      lines.some((l) => /one tmux process per command from now on/.test(l)),
      lines.join("\n"),
    );
    await tmux.close();
  } finally {
    await server.close();
  }
});

Deno.test("tmux control mode falls back to processes when the attach target is unknown", async () => {
  const server = await startTmuxServer();
  try {
    const tmux = createTmuxCommand(realDeps(server), { attachTarget: () => "%999" });
    const r = await tmux.run([["display-message", "-p", "x"]]);
    assert.equal(r.stdout, "x\n");
    assert.equal(tmux.transport(), "cli");
    await tmux.close();
  } finally {
    await server.close();
  }
});

Deno.test("tmux command errors over control mode keep the CLI's codes", async () => {
  const server = await startTmuxServer();
  try {
    const tmux = createTmuxCommand(realDeps(server), { attachTarget: () => server.anchorPane });
    const r = await tmux.run([["list-panes", "-t", "%999"]]);
    assert.equal(r.code, 1);
    assert.equal(r.stderr, "can't find pane: %999\n");
    await assert.rejects(
      tmux.must("title pane", [["select-pane", "-t", "%999", "-T", "x"]]),
      (e) => isMuxError(e, "pane_not_found"),
    );
    assert.equal(tmux.transport(), "control");
    await tmux.close();
  } finally {
    await server.close();
  }
});

Deno.test("tmux control mode: every pane of a window ending at once does not crash tmux (channel detached first)", async () => {
  // tmux 3.3a's server dies (SIGSEGV) when a window whose panes all end in the same instant is
  // destroyed while a control client is attached (see ENDS_PANES in _command.ts); here the
  // panes end on the interrupts muxbridge sends, all at once.
  const server = await startTmuxServer();
  try {
    const backend = createTmuxBackend(realDeps(server));
    await backend.probe();
    const first = (await server.tmux([
      "new-window",
      "-d",
      "-P",
      "-F",
      "#{pane_id}",
      "-t",
      "t:",
      "sleep",
      "100000",
    ])).trim();
    const panes = [first];
    for (let i = 0; i < 3; i++) {
      panes.push(
        (await server.tmux([
          "split-window",
          "-d",
          "-P",
          "-F",
          "#{pane_id}",
          "-t",
          first,
          "sleep",
          "100000",
        ]))
          .trim(),
      );
    }
    await backend.listOwned(); // the channel is attached now
    const { closePane } = await import("../../lib/session/close_pane.ts");
    await Promise.all(
      panes.map((p) =>
        closePane(backend, p, { graceMs: 500, clock, processes: createProcesses() })
      ),
    );
    const alive = await server.run(["list-sessions"]);
    assert.equal(alive.code, 0, `the tmux server died: ${alive.stderr}`);
    await backend.dispose?.();
  } finally {
    await server.close();
  }
});
