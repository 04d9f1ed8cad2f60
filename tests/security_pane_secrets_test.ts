/**
 * No advice that weakens the user (issue 23, item 3): plain `opencode` works under zellij and cmux
 * too. A bridge holding the server's password (as it does for plain `opencode`: the plugin's
 * per-run secret, or `OPENCODE_SERVER_PASSWORD`) opens a child's pane under the fake zellij and
 * the fake cmux CLIs, and the pane's program gets the password in its environment, while the
 * password is on no argv (the multiplexer's, the program's), never typed, and in no file left
 * behind: the private credentials folder is 0700 and empty once the program runs. On main both
 * backends skipped the child with `auth_unsupported`.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { FAKE_CMUX, startFakeCmux } from "./backends/cmux_fixture.ts";
import { FAKE_SESSION, FAKE_ZELLIJ, startFakeZellij } from "./backends/zellij_fixture.ts";
import { events, startBridge } from "./helpers/bridge_process.ts";
import { serveFakeOpencode } from "./helpers/fake_opencode_server.ts";
import { isType } from "./helpers/real_life.ts";
import { type Launch, recordedLaunches, writeStandIn } from "./helpers/stand_in.ts";

const SECRET = "per-run 'Secret' $(no) 7f3a";
const clock = createRealClock();

/** What a run left to check. */
interface Run {
  launch: Launch;
  /** The multiplexer CLI's argv log, every call. */
  argvs: string[][];
  /** The bridge's stdout and stderr. */
  output: string;
  /** The state directory's credentials folder. */
  credentials: string;
}

/**
 * Runs a bridge with `config` and `env` against a fake OpenCode that wants the password, sends a
 * child, waits for its pane's program to start, then ends the bridge.
 */
async function childPane(
  dir: string,
  config: Record<string, unknown>,
  env: Record<string, string>,
  argvs: () => Promise<string[][]> | string[][],
): Promise<Run> {
  const oc = serveFakeOpencode();
  oc.fake.password = SECRET;
  oc.fake.knowAll = true;
  const prog = `${dir}/prog`;
  await Deno.mkdir(prog);
  const standIn = await writeStandIn(prog);
  const state = `${dir}/state`;
  await Deno.writeTextFile(
    `${dir}/config.json`,
    JSON.stringify({ ...config, opencode_bin: standIn, state_dir: state }),
  );
  const bridge = startBridge(["--url", oc.url, "--dir", prog], {
    ...env,
    HOME: dir,
    XDG_CONFIG_HOME: `${dir}/xdg`,
    MUXBRIDGE_CONFIG: `${dir}/config.json`,
    OPENCODE_SERVER_PASSWORD: SECRET,
  });
  try {
    await bridge.waitFor(isType("ready"));
    await bridge.send(events.created("ses_secretParent", "p", null, prog));
    await bridge.send(events.created("ses_secretChild", "c", "ses_secretParent", prog));
    await bridge.send(events.status("ses_secretChild", "busy"));
    await bridge.waitFor((l) =>
      (l.type === "pane.opened" || l.type === "pane.skipped" || l.type === "pane.failed") &&
      l.sessionID === "ses_secretChild"
    );
    const opened = bridge.lines.find(isType("pane.opened", "ses_secretChild"));
    assert.ok(opened, `the child got a pane: ${JSON.stringify(bridge.lines)}`);
    let launches: Launch[] = [];
    const started = await waitFor(
      clock,
      async () => (launches = await recordedLaunches(prog)).length > 0,
      { deadline: clock.now() + 15_000, maxIntervalMs: 50 },
    );
    assert.ok(started, "the pane's program started");
    const launch = launches[0];
    const cmdline = await Deno.readTextFile(`/proc/${launch.pid}/cmdline`).catch(() => "");
    assert.ok(!cmdline.includes("Secret"), "the program's own argv has no password");
    await bridge.endInput();
    await bridge.waitFor(isType("bye"));
    return {
      launch,
      argvs: await argvs(),
      output: `${JSON.stringify(bridge.lines)}\n${bridge.stderr()}`,
      credentials: `${await Deno.realPath(state)}/credentials`,
    };
  } finally {
    bridge.kill("SIGKILL");
    await bridge.status.catch(() => {});
    await oc.close();
  }
}

async function assertPrivate(run: Run): Promise<void> {
  assert.equal(run.launch.password, SECRET, "the program has the password");
  assert.deepEqual(run.launch.argv.slice(0, 1), ["attach"]);
  for (const argv of run.argvs) {
    assert.ok(!argv.some((a) => a.includes("Secret")), `not on argv: ${JSON.stringify(argv)}`);
  }
  assert.ok(!run.output.includes("Secret"), "nor in the bridge's output or log");
  assert.equal((await Deno.stat(run.credentials)).mode! & 0o777, 0o700);
  assert.deepEqual([...Deno.readDirSync(run.credentials)], [], "no credentials file is left");
}

Deno.test("plain opencode under zellij: the pane's program gets the password, never on argv, from a file gone once it started", async () => {
  const z = await startFakeZellij();
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-sec-secrets-"));
  try {
    const run = await childPane(
      dir,
      { backend: "zellij", zellij: { bin: FAKE_ZELLIJ } },
      { ...z.env, ZELLIJ: "0", ZELLIJ_SESSION_NAME: FAKE_SESSION, ZELLIJ_PANE_ID: "0" },
      () => z.calls(),
    );
    await assertPrivate(run);
    assert.ok(run.argvs.some((a) => a.includes("new-pane")), "zellij opened it");
  } finally {
    await z.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("plain opencode under cmux: the pane's program gets the password, never typed nor on argv, from a file gone once it started", async () => {
  const fake = await startFakeCmux();
  const dir = mkdtempSync(join(tmpdir(), "muxbridge-sec-secrets-"));
  try {
    const run = await childPane(
      dir,
      { backend: "cmux", cmux: { bin: FAKE_CMUX } },
      fake.env,
      () => fake.calls(),
    );
    await assertPrivate(run);
    const split = run.argvs.find((a) => a.includes("new-split") && a.includes("--command"))!;
    const typed = split[split.indexOf("--command") + 1];
    assert.match(
      typed,
      /^ cd '.*' && exec '\/bin\/sh' '-c' '\. "\$0"; rm -f -- "\$0"; exec "\$@"' '/,
    );
  } finally {
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
