/**
 * Where the tmux backend puts a new pane, against a fake runner: the size rules (pure), and the
 * way to `no_space` when tmux has no room even in a new window (a path real tmux cannot be made
 * to take: `new-window` does not run out of space).
 */

import assert from "node:assert/strict";
import { createTmuxBackend } from "../../backends/tmux/backend.ts";
import { columnHeightWithOneMore, tiledCell } from "../../backends/tmux/_window_layout.ts";
import { PANE_FORMAT, RS, US } from "../../backends/tmux/_parse.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { detectAll, resolveConfig } from "../helpers/config.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createFakeRunner } from "../fakes/fake_runner.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { validateSessionId } from "../../lib/sys/validate.ts";

Deno.test("tiledCell() follows tmux's tiled grid (checked live in a 120x40 window)", () => {
  assert.deepEqual(tiledCell(1, 120, 40), { width: 120, height: 40 });
  assert.deepEqual(tiledCell(12, 120, 40), { width: 39, height: 9 });
  assert.deepEqual(tiledCell(13, 120, 40), { width: 29, height: 9 });
  assert.deepEqual(tiledCell(20, 120, 40), { width: 29, height: 7 });
  assert.deepEqual(tiledCell(31, 120, 40), { width: 19, height: 5 });
});

Deno.test("columnHeightWithOneMore() measures a column of owned panes only", () => {
  // anchor %0 | column [%2 %3] | user %1, as muxbridge's splits build it (observed live).
  const layout = "9543,120x40,0,0{30x40,0,0,0,29x40,31,0[29x10,31,0,2,29x29,31,11,3],59x40,61,0,1}";
  const owned = new Set(["%2", "%3"]);
  assert.equal(columnHeightWithOneMore(layout, "%2", owned), 12); // (40 - 2) / 3
  assert.equal(columnHeightWithOneMore(layout, "%2", new Set(["%2"])), null, "a foreign pane");
  assert.equal(columnHeightWithOneMore(layout, "%0", owned), null, "not in a column");
  assert.equal(columnHeightWithOneMore("garbage", "%2", owned), null);
});

const row = (fields: Record<string, string>) => {
  const base: Record<string, string> = {
    pane_id: "%0",
    pane_dead: "0",
    pane_pid: "10",
    pane_active: "1",
    pane_index: "0",
    pane_width: "30",
    pane_height: "10",
    window_id: "@0",
    window_index: "0",
    window_active: "1",
    window_zoomed_flag: "0",
    window_width: "30",
    window_height: "10",
    session_id: "$0",
    version: "3.3a",
    window_layout: "c0de,30x10,0,0,0",
    "@muxbridge-overflow": "",
    "@muxbridge-owner": "",
    "@muxbridge-session": "",
    pane_title: "user",
    ...fields,
  };
  const names = [...PANE_FORMAT.matchAll(/#\{([^}]+)\}/g)].map((m) => m[1]);
  return RS + names.map((n) => base[n]).join(US) + "\n";
};

/**
 * A backend whose tmux answers from a fake: the anchor listing, then each open call (a guarded
 * split, or a new window) with its own answer, the listing always printed after it.
 */
function backendOn(
  anchorRow: string,
  splitAnswer?: { code: number; stderr: string; stdout?: string },
) {
  const fake = createFakeRunner();
  const prefix = ["tmux", "-u", "-L", "s"];
  fake.on([...prefix, "list-panes", "-s", "-t", "%0", "-F", PANE_FORMAT], { stdout: anchorRow });
  if (splitAnswer) {
    fake.onPrefix([...prefix, "if-shell", "-F", "-t"], {
      ...splitAnswer,
      stdout: `${splitAnswer.stdout ?? ""}${anchorRow}`,
    });
  }
  fake.onPrefix([...prefix, "if-shell", "-F", "1"], {
    code: 1,
    stdout: anchorRow,
    stderr: "no space for new pane\n",
  });
  const env = fakeEnv({});
  const backend = createTmuxBackend({
    run: fake.run,
    env,
    clock: createRealClock(),
    config: resolveConfig({
      env,
      flags: { backend: "tmux", tmux: { socket_name: "s", target: "%0" } },
    }),
    identity: detectAll(env),
    log: silentLogger,
  });
  return { fake, backend };
}

const request = {
  sessionId: validateSessionId("ses_nospace"),
  title: "t",
  argv: ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_nospace"],
  cwd: "/tmp",
  env: {},
  owner: "cli",
};

/** Each call's verb and, for a guarded open, the command its block starts with. */
const verbs = (fake: ReturnType<typeof createFakeRunner>) =>
  fake.calls.map((c) => {
    const verb = c.argv[4];
    if (verb !== "if-shell") return verb;
    return `${verb} ${c.argv.find((a) => /^(split-window|new-window) /.test(a))?.split(" ")[0]}`;
  });

Deno.test("tmux spawn() reports no_space when neither a split nor a new window has room", async () => {
  const { fake, backend } = backendOn(
    row({ pane_width: "41", window_width: "41", window_layout: "c0de,41x10,0,0,0" }),
    { code: 1, stderr: "no space for new pane\n" },
  );
  await assert.rejects(backend.spawn(request), (err: unknown) => isMuxError(err, "no_space"));
  assert.deepEqual(verbs(fake), ["list-panes", "if-shell split-window", "if-shell new-window"]);
});

Deno.test("tmux spawn() does not split an anchor too narrow for two usable panes", async () => {
  const { fake, backend } = backendOn(row({}));
  await assert.rejects(backend.spawn(request), (err: unknown) => isMuxError(err, "no_space"));
  assert.deepEqual(verbs(fake), ["list-panes", "if-shell new-window"]);
});

Deno.test("tmux spawn() kills a pane whose marks failed in the middle of the call, and reports it", async () => {
  const wide = row({ pane_width: "120", window_width: "120", window_layout: "c0de,120x10,0,0,0" });
  const { fake, backend } = backendOn(wide, {
    code: 1,
    stdout: "%7 4242\n", // the split ran and printed its pane; the listing shows it unmarked
    stderr: "something failed after the split\n",
  });
  fake.on(["tmux", "-u", "-L", "s", "kill-pane", "-t", "%7"], { stdout: "" });
  await assert.rejects(
    backend.spawn(request),
    (err: unknown) => isMuxError(err, "command_failed") && /mark new pane "%7"/.test(err.message),
  );
  assert.deepEqual(verbs(fake), ["list-panes", "if-shell split-window", "kill-pane"]);
});
