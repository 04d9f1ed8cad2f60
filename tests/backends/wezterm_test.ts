/**
 * The wezterm backend's own behaviour against the fake CLI (`tests/fakes/bin/wezterm`, which
 * follows wezterm's source: docs/backends/wezterm.md): exact argv, focus, credentials, the
 * spawn token, the version gate on dates, and failures. The shared contract is in
 * `wezterm_contract_test.ts`.
 */

import assert from "node:assert/strict";
import { createWeztermBackend, type SessionLeader } from "../../backends/wezterm/backend.ts";
import {
  classifyWeztermFailure,
  parseList,
  parseWeztermVersion,
  weztermMessage,
  weztermPaneId,
} from "../../backends/wezterm/_parse.ts";
import { programArgv } from "../../backends/wezterm/_command.ts";
import { splitPlan } from "../../backends/wezterm/_place.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { closePane } from "../../lib/session/close_pane.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { createProcesses } from "../../lib/sys/processes.ts";
import { recordedLaunches, writeStandIn } from "../helpers/stand_in.ts";
import { until } from "../helpers/until.ts";
import { cutHungCall, PATIENT_TIMEOUT_MS } from "../helpers/hung_call.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { answerFault, losingRunner } from "./_lost_answer.ts";
import { type FakeWezterm, startFakeWezterm } from "./wezterm_fixture.ts";
import { validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";

const clock = createRealClock();
const processes = createProcesses();

async function withFake(
  fn: (fake: FakeWezterm) => Promise<void>,
  init?: Parameters<typeof startFakeWezterm>[0],
) {
  const fake = await startFakeWezterm(init);
  try {
    await fn(fake);
  } finally {
    await fake.close();
  }
}

/** A stand-in `opencode` in a fresh directory under the fake's, and a spawn request for it. */
async function request(fake: FakeWezterm, sessionId: string, env: Record<string, string> = {}) {
  const progDir = await Deno.makeTempDir({ dir: fake.dir });
  const standIn = await writeStandIn(progDir);
  return {
    progDir,
    req: {
      sessionId: validateSessionId(sessionId),
      title: "child",
      argv: [standIn, "attach", "http://127.0.0.1:4096", "--session", sessionId],
      cwd: progDir,
      env,
      owner: "cli",
    },
  };
}

async function launched(progDir: string) {
  let launch;
  await until("the pane's program started", async () => {
    launch = (await recordedLaunches(progDir))[0];
    return launch !== undefined;
  });
  return launch!;
}

// ---------------------------------------------------------------- parsing

Deno.test("parseWeztermVersion() reads date-based versions as dates, and maps them to semver only for the probe", () => {
  assert.deepEqual(parseWeztermVersion("wezterm 20240203-110809-5046fc22"), {
    text: "20240203-110809-5046fc22",
    stamp: 20240203110809,
    date: "2024-02-03",
    semver: "20240203.110809.0+5046fc22",
  });
  // A nightly: same scheme (docs/backends/wezterm.md §5).
  assert.equal(parseWeztermVersion("wezterm 20250624-071246-2deb317e")?.date, "2025-06-24");
  // Leading zeros in the time are a number's, not semver's.
  assert.equal(
    parseWeztermVersion("wezterm 20230408-012425-69ae8472")?.semver,
    "20230408.12425.0+69ae8472",
  );
  for (const bad of ["wezterm ", "wezterm 0.1.0", "wezterm 20241399-110809-5046fc22", "3.3a"]) {
    assert.equal(parseWeztermVersion(bad), null, bad);
  }
});

Deno.test("parseList() takes the fields every version has, and is_dead/tty_name only where present", () => {
  const base = {
    window_id: 0,
    tab_id: 1,
    pane_id: 7,
    workspace: "default",
    size: { rows: 10, cols: 20 },
    title: "t",
    cwd: "",
  };
  assert.deepEqual(parseList(JSON.stringify([base])), [{
    paneId: "7",
    tabId: 1,
    windowId: 0,
    title: "t",
    area: 200,
    size: { rows: 10, cols: 20 },
  }]);
  const [newer] = parseList(
    JSON.stringify([{ ...base, tty_name: null, is_dead: true, exit_code: 3 }]),
  );
  assert.equal(newer.ttyName, null);
  assert.equal(newer.isDead, true);
  assert.throws(() => parseList('[{"pane_id":"7"}]'), (e) => isMuxError(e, "unparseable_output"));
  assert.throws(() => parseList("garbage"), (e) => isMuxError(e, "unparseable_output"));
});

Deno.test("weztermMessage() and classifyWeztermFailure() read wezterm's error lines", () => {
  const wrapped = (reason: string) =>
    `12:00:00.000  ERROR  wezterm > unexpected response Ok(ErrorResponse(ErrorResponse { reason: "Error: ${reason}" })); terminating\n`;
  assert.equal(weztermMessage(wrapped("no such pane 42")), "no such pane 42");
  for (const reason of ["no such pane 42", "pane_id 3 invalid", "pane 9 not found"]) {
    assert.equal(classifyWeztermFailure(wrapped(reason)), "not_found", reason);
  }
  assert.equal(classifyWeztermFailure(wrapped("No space for split!")), "no_space");
  assert.equal(
    classifyWeztermFailure(
      `12:00:00.000  ERROR  wezterm > failed to connect to Socket("/run/user/1000/wezterm/sock"): connecting to /run/user/1000/wezterm/sock; terminating`,
    ),
    "unreachable",
  );
  assert.equal(classifyWeztermFailure(wrapped("cannot split while zoomed")), "other");
});

Deno.test("programArgv() passes argv untouched when there is nothing to add, else through an explicit /bin/sh -c with the values as positional parameters", () => {
  assert.deepEqual(programArgv(["opencode", "a;b"], {}), ["opencode", "a;b"]);
  const token = "0123456789abcdef0123456789abcdef";
  assert.deepEqual(
    programArgv(["opencode", "$(x)"], { token, credentials: { file: "/s/credentials/0a.env" } }),
    [
      "/bin/sh",
      "-c",
      `. '/s/credentials/0a.env'; rm -f -- '/s/credentials/0a.env'; export MUXBRIDGE_SPAWN_TOKEN=${token}; exec "$@"`,
      "muxbridge",
      "opencode",
      "$(x)",
    ],
  );
  assert.throws(() => programArgv(["x"], { token: "not a token" }), RangeError);
});

Deno.test("splitPlan() splits the anchor first by layout and main_pane_size, then the largest pane muxbridge opened in that tab", () => {
  const pane = (paneId: string, tabId: number, rows: number, cols: number) => ({
    paneId: weztermPaneId(paneId),
    tabId,
    windowId: 0,
    title: "",
    area: rows * cols,
    size: { rows, cols },
  });
  const anchor = pane("0", 0, 50, 120);
  const panes = [anchor, pane("4", 0, 50, 80), pane("5", 0, 25, 80), pane("9", 1, 60, 200)];
  const none = new Set<string>();
  const ours = new Set(["4", "5", "9"]);
  const first = (layout: Parameters<typeof splitPlan>[3]) =>
    splitPlan(panes, anchor, none, layout, 60);
  assert.deepEqual(first("main-vertical"), { target: "0", side: "right", percent: 40 });
  assert.deepEqual(first("main-horizontal"), { target: "0", side: "bottom", percent: 40 });
  assert.deepEqual(first("even-vertical"), { target: "0", side: "bottom", percent: 50 });
  assert.deepEqual(first("tiled"), { target: "0", side: "right", percent: 50 });
  // Pane 9 is larger but in another tab.
  assert.deepEqual(splitPlan(panes, anchor, ours, "main-vertical", 60), {
    target: "4",
    side: "bottom",
    percent: 50,
  });
  assert.equal(splitPlan(panes, anchor, ours, "even-horizontal", 60).side, "right");
});

// ---------------------------------------------------------------- spawn

Deno.test("wezterm spawn() splits the pane muxbridge runs in with the exact argv, no shell, always --no-auto-start", async () => {
  await withFake(async (fake) => {
    const backend = createWeztermBackend(fake.deps({ main_pane_size: 60 }), { leaders: null });
    const { req, progDir } = await request(fake, "ses_weztermArgv");
    const { paneId } = await backend.spawn({ ...req, argv: [...req.argv, "a;b", "$(x)", "-n"] });
    assert.equal(paneId, "1");
    const calls = fake.calls();
    assert.ok(calls.filter((c) => c[0] === "cli").every((c) => c[1] === "--no-auto-start"));
    const split = calls.find((c) => c.includes("split-pane"))!;
    assert.deepEqual(split, [
      "cli",
      "--no-auto-start",
      "split-pane",
      "--pane-id",
      "0",
      "--right",
      "--percent",
      "40",
      `--cwd=${progDir}`,
      "--",
      ...req.argv,
      "a;b",
      "$(x)",
      "-n",
    ]);
    const launch = await launched(progDir);
    assert.deepEqual(launch.argv.slice(-3), ["a;b", "$(x)", "-n"]);
  });
});

Deno.test("wezterm spawn() gives focus back to the pane the user types in, which split-pane took", async () => {
  await withFake(async (fake) => {
    const backend = createWeztermBackend(fake.deps(), { leaders: null });
    const { req } = await request(fake, "ses_weztermFocus");
    const { paneId } = await backend.spawn(req);
    const state = fake.read();
    assert.equal(state.tabs[0].active, 0, "pane 0 is the tab's active pane again");
    const calls = fake.calls().map((c) => c.slice(2).join(" "));
    const split = calls.findIndex((c) => c.startsWith("split-pane"));
    assert.equal(calls[split + 1], "activate-pane --pane-id 0", "right after the split");
    assert.ok(state.panes.some((p) => String(p.id) === paneId));
  });
});

Deno.test("wezterm spawn() leaves focus alone while the user looks at another tab (activate-pane would switch tabs)", async () => {
  await withFake(
    async (fake) => {
      const backend = createWeztermBackend(fake.deps(), { leaders: null });
      const { req } = await request(fake, "ses_weztermOtherTab");
      await backend.spawn(req);
      const state = fake.read();
      assert.equal(state.windows[0].activeTab, 1, "the user's tab stays in front");
      assert.ok(!fake.calls().some((c) => c.includes("activate-pane")));
    },
    (s) => {
      s.tabs.push({ id: 1, window: 0, title: "", active: 1 });
      s.panes.push({ ...s.panes[0], id: 1, tab: 1, title: "vim" });
      s.nextPane = 2;
      s.windows[0].activeTab = 1;
    },
  );
});

Deno.test("wezterm spawn() splits later panes off the largest pane it opened, one above the other (main-vertical)", async () => {
  await withFake(async (fake) => {
    const backend = createWeztermBackend(fake.deps({ layout: "main-vertical" }), { leaders: null });
    const first = await backend.spawn((await request(fake, "ses_weztermFirst")).req);
    await backend.spawn((await request(fake, "ses_weztermSecond")).req);
    const splits = fake.calls().filter((c) => c.includes("split-pane")).map((c) => c.slice(3, 8));
    assert.deepEqual(splits, [
      ["--pane-id", "0", "--right", "--percent", "40"],
      ["--pane-id", first.paneId, "--bottom", "--percent", "50"],
    ]);
  });
});

Deno.test("wezterm spawn() never puts credentials on an argv; the pane gets them and their file is gone", async () => {
  await withFake(async (fake) => {
    const backend = createWeztermBackend(fake.deps(), { leaders: null });
    const secret = "s3cret 'x' $(no)";
    const { req, progDir } = await request(fake, "ses_weztermEnv", {
      OPENCODE_SERVER_PASSWORD: secret,
    });
    await backend.spawn(req);
    const launch = await launched(progDir);
    assert.equal(launch.password, secret);
    assert.ok(
      !fake.calls().some((c) => c.some((a) => a.includes("s3cret"))),
      "not on wezterm's argv",
    );
    const split = fake.calls().find((c) => c.includes("split-pane"))!;
    const file = /\. '([^']+)'/.exec(split.join(" "))![1];
    await until("the credentials file is removed", async () => {
      try {
        await Deno.stat(file);
        return false;
      } catch {
        return true;
      }
    });
  });
});

Deno.test("wezterm spawn() refuses credentials next to a pane of a remote domain (no tty_name), and splits nothing", async () => {
  await withFake(
    async (fake) => {
      const backend = createWeztermBackend(fake.deps(), { leaders: null });
      const { req } = await request(fake, "ses_weztermRemote", { OPENCODE_SERVER_PASSWORD: "x" });
      await assert.rejects(backend.spawn(req), (e) => isMuxError(e, "auth_unsupported"));
      assert.ok(!fake.calls().some((c) => c.includes("split-pane")));
    },
    (s) => {
      s.panes[0].tty = null;
    },
  );
});

Deno.test("wezterm spawn() reports no room (No space for split!) as no_space and a missing program as command_failed", async () => {
  await withFake(
    async (fake) => {
      const backend = createWeztermBackend(fake.deps(), { leaders: null });
      const { req } = await request(fake, "ses_weztermNoSpace");
      await assert.rejects(backend.spawn(req), (e) => isMuxError(e, "no_space"));
      fake.update((s) => {
        s.panes[0].cols = 200;
      });
      await assert.rejects(
        backend.spawn({ ...req, argv: ["/nonexistent/opencode"] }),
        (e) => isMuxError(e, "command_failed") && /doesn't exist on the filesystem/.test(e.message),
      );
    },
    (s) => {
      s.panes[0].cols = 2;
    },
  );
});

Deno.test("wezterm probe() needs the pane to split: without one it is no_backend with the hint", async () => {
  await withFake(async (fake) => {
    const deps = fake.deps();
    const backend = createWeztermBackend({
      ...deps,
      identity: {
        backend: "wezterm",
        layers: [{ backend: "wezterm", paneId: null }],
        harness: { name: null },
      },
    });
    await assert.rejects(
      backend.probe(),
      (e) => isMuxError(e, "no_backend") && /wezterm\.pane_id/.test(e.hint ?? ""),
    );
    const configured = createWeztermBackend({
      ...deps,
      config: { ...deps.config, wezterm: { ...deps.config.wezterm, pane_id: 0 } },
    });
    assert.ok((await configured.probe()).version.startsWith("20240203."));
  });
});

// ---------------------------------------------------------------- close

Deno.test("wezterm interrupt() sends byte 3 with --no-paste, which ends a program that exits on Ctrl+C", async () => {
  await withFake(async (fake) => {
    const backend = createWeztermBackend(fake.deps(), { leaders: null });
    const { req, progDir } = await request(fake, "ses_weztermInterrupt");
    const { paneId } = await backend.spawn(req);
    const launch = await launched(progDir);
    const result = await closePane(backend, paneId, { graceMs: 5000, clock, processes });
    assert.equal(result.killed, false);
    assert.ok(!processes.alive(launch.pid));
    assert.ok(
      fake.calls().some((c) =>
        c.join(" ") === `cli --no-auto-start send-text --pane-id ${paneId} --no-paste -- \x03`
      ),
    );
  });
});

// ---------------------------------------------------------------- the spawn token

Deno.test("wezterm findSpawned() finds a pane by the token in its program's environment, only for the socket muxbridge talks to", async () => {
  await withFake(async (fake) => {
    const token = "0123456789abcdef0123456789abcdef";
    const backend = createWeztermBackend(fake.deps(), {
      leaders: (): SessionLeader[] => [
        {
          pid: 4001,
          env: {
            WEZTERM_PANE: "0",
            WEZTERM_UNIX_SOCKET: fake.socket,
            MUXBRIDGE_SPAWN_TOKEN: token,
          },
        },
        // Pane 0 of another WezTerm carrying the same token: never this one's pane 0.
        {
          pid: 4002,
          env: {
            WEZTERM_PANE: "0",
            WEZTERM_UNIX_SOCKET: "/other/sock",
            MUXBRIDGE_SPAWN_TOKEN: token,
          },
        },
        { pid: 4003, env: { WEZTERM_PANE: "0", WEZTERM_UNIX_SOCKET: fake.socket } },
      ],
    });
    assert.deepEqual(await backend.findSpawned(token), [
      { paneId: "0", dead: false, title: "opencode", pid: 4001 },
    ]);
    assert.deepEqual(await backend.findSpawned("f".repeat(32)), []);
  });
});

Deno.test("wezterm without a readable process table has no spawn token; a split whose answer is unreadable is closed by comparing the tab", async () => {
  await withFake(async (fake) => {
    const answers = answerFault();
    const run = losingRunner(fake.runner, answers, (argv) => argv.includes("split-pane"));
    const backend = createWeztermBackend(fake.deps({}, undefined, run), { leaders: null });
    assert.equal(backend.capabilities.spawnToken, false);
    const { req, progDir } = await request(fake, "ses_weztermGarbage");
    answers.next = "garbage";
    await assert.rejects(
      backend.spawn({ ...req, token: "0123456789abcdef0123456789abcdef" }),
      (e) => isMuxError(e, "unparseable_output"),
    );
    assert.deepEqual(fake.read().panes.map((p) => p.id), [0], "the new pane was closed");
    const split = fake.calls().find((c) => c.includes("split-pane"))!;
    assert.ok(
      !split.join(" ").includes("MUXBRIDGE_SPAWN_TOKEN"),
      "no token without a way to find it",
    );
    const launch = (await recordedLaunches(progDir))[0];
    if (launch) await until("its program is gone", () => !processes.alive(launch.pid));
  });
});

Deno.test("wezterm spawn() reports the program's pid when the process table shows it", async () => {
  await withFake(async (fake) => {
    const backend = createWeztermBackend(fake.deps());
    if (!backend.capabilities.spawnToken) return; // off Linux: nothing to read
    const { req, progDir } = await request(fake, "ses_weztermPid");
    const { pid } = await backend.spawn(req);
    const launch = await launched(progDir);
    assert.equal(pid, launch.pid);
  });
});

// ---------------------------------------------------------------- versions and failures

Deno.test("wezterm versions are gated by date: older than 20230326-111934 is unsupported_version, a tagless build is unparseable (doctor warns)", async () => {
  await withFake(
    async (fake) => {
      const backend = createWeztermBackend(fake.deps(), { leaders: null });
      await assert.rejects(
        backend.probe(),
        (e) => isMuxError(e, "unsupported_version") && /2023-03-20/.test(e.message),
      );
      fake.update((s) => {
        s.version = "";
      });
      const tagless = createWeztermBackend(fake.deps(), { leaders: null });
      await assert.rejects(tagless.probe(), (e) => isMuxError(e, "unparseable_output"));
      const checks = await tagless.doctor();
      assert.equal(checks[0].name, "wezterm version");
      assert.equal(checks[0].status, "warn");
    },
    (s) => {
      s.version = "20230320-124340-559cb7b0";
    },
  );
});

Deno.test("wezterm with no mux to reach is backend_unreachable with the socket hint, never an auto-started server", async () => {
  await withFake(async (fake) => {
    const backend = createWeztermBackend(
      fake.deps({ wezterm: { socket_path: `${fake.dir}/no-such-sock` } }),
      { leaders: null },
    );
    await assert.rejects(
      backend.probe(),
      (e) =>
        isMuxError(e, "backend_unreachable") &&
        /WEZTERM_UNIX_SOCKET|socket_path/.test(e.hint ?? ""),
    );
    const failed = (await backend.doctor()).find((c) => c.name === "wezterm mux");
    assert.equal(failed?.status, "fail");
  });
});

Deno.test("wezterm calls that hang, crash or print garbage are bounded errors", async () => {
  for (
    const [fault, codes] of [
      ["hang:list", ["timed_out"]],
      ["garbage:list", ["unparseable_output"]],
      ["crash:list", ["command_failed"]],
    ] as const
  ) {
    await withFake(async (fake) => {
      fake.env.FAKE_WEZTERM_FAULT = fault;
      // Only the hung call is cut short (a slow healthy call under load is no fault).
      const run = cutHungCall(fake.runner, () => fake.env.FAKE_WEZTERM_FAULT);
      const backend = createWeztermBackend(
        fake.deps({ command_timeout_ms: PATIENT_TIMEOUT_MS }, silentLogger, run),
        { leaders: null },
      );
      await assert.rejects(
        backend.inspect(validatePaneId("0")),
        (e) => isMuxError(e, ...codes),
        fault,
      );
    });
  }
});
