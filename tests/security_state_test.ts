/**
 * Security findings about the state directory and its records (issue 17, items 1 and 4),
 * each reproduced as it was found. "Another local user" is `nobody`: the tests run as root and
 * give directories and files to uid 65534. Each test failed before the fix (see the issue's
 * closing note for the run against the old code).
 */

import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { resolveConfig, stateDir } from "../lib/config/config.ts";
import { createPaneStore, type PaneRecordInput } from "../lib/session/pane_store.ts";
import { createProcesses } from "../lib/sys/processes.ts";
import { runCli } from "./helpers/cli_process.ts";
import { giveToNobody, listen, NOBODY } from "./helpers/listener.ts";
import { tmuxBridgeEnv } from "./helpers/real_life.ts";
import { startTmuxServer, type TmuxServer } from "./helpers/tmux_server.ts";
import { until } from "./helpers/until.ts";

const DEAD_OWNER = "999999:1";

function record(paneId: string, extra: Partial<PaneRecordInput> = {}): PaneRecordInput {
  return {
    sessionId: "ses_victim1",
    paneId,
    backend: "tmux",
    title: "t",
    openedAt: "2026-11-30T12:00:00.000Z",
    owner: DEAD_OWNER,
    ...extra,
  };
}

const recordFile = (paneId: string) =>
  `tmux.${btoa(paneId).replaceAll("+", "-").replaceAll("/", "_").replaceAll("=", "")}.json`;

function scratch(): string {
  return mkdtempSync(join(tmpdir(), "muxbridge-sec-"));
}

/** A private tmux server and the CLI environment pointing at it and at `stateDir`. */
async function tmuxCli(dir: string, stateDirPath: string) {
  const server = await startTmuxServer();
  const env = {
    ...(await tmuxBridgeEnv(server, dir)),
    MUXBRIDGE_STATE_DIR: stateDirPath,
  };
  return { server, env };
}

async function paneAlive(server: TmuxServer, paneId: string): Promise<boolean> {
  return (await server.run(["list-panes", "-t", paneId])).code === 0;
}

Deno.test("stateDir() without HOME takes the account's home directory, never /tmp", () => {
  const config = resolveConfig({ env: () => undefined });
  const noHome = () => undefined;
  assert.equal(
    stateDir(config, noHome, () => "/home/alice"),
    "/home/alice/.local/state/muxbridge",
  );
  const dir = stateDir(config, noHome);
  assert.equal(dir, `${userInfo().homedir}/.local/state/muxbridge`);
  assert.ok(!dir.startsWith("/tmp/"), dir);
});

Deno.test("list refuses a state directory another user owns: exit 3, naming the path and the fix", async () => {
  const dir = scratch();
  try {
    const state = join(dir, "state");
    mkdirSync(join(state, "panes"), { recursive: true, mode: 0o700 });
    giveToNobody(state);
    const r = await runCli(["list", "--json"], { env: { MUXBRIDGE_STATE_DIR: state } });
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.equal(r.stdout, "");
    const lines = r.stderr.trim().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0], new RegExp(`"${state}": it is owned by uid ${NOBODY}, not by you`));
    assert.match(lines[0], /MUXBRIDGE_STATE_DIR/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("list refuses a state directory other users can write to, and one under another user's parent", async () => {
  const dir = scratch();
  try {
    const open = join(dir, "open");
    mkdirSync(open, { mode: 0o700 });
    chmodSync(open, 0o777);
    const r = await runCli(["list"], { env: { MUXBRIDGE_STATE_DIR: open } });
    assert.equal(r.code, 3, r.stderr);
    assert.match(r.stderr, /other users can write to it \(mode 0777\).*chmod 700/);

    const theirs = join(dir, "theirs");
    mkdirSync(theirs, { mode: 0o755 });
    giveToNobody(theirs);
    const under = join(theirs, "state");
    const r2 = await runCli(["list"], { env: { MUXBRIDGE_STATE_DIR: under } });
    assert.equal(r2.code, 3, r2.stderr);
    assert.match(r2.stderr, new RegExp(`its parent is owned by uid ${NOBODY} \\(${theirs}\\)`));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("the state directory and its subfolders are created 0700 for this user", async () => {
  const dir = scratch();
  try {
    const state = join(dir, "a", "state");
    const r = await runCli(["list"], { env: { MUXBRIDGE_STATE_DIR: state } });
    assert.equal(r.code, 0, r.stderr);
    for (const d of [join(dir, "a"), state, join(state, "panes")]) {
      assert.equal(statSync(d).mode & 0o777, 0o700, d);
      assert.equal(statSync(d).uid, process.getuid!(), d);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("cleanup with records another user planted: no password to their listener, the victim's pane and an unrelated process survive", async () => {
  const dir = scratch();
  const listener = listen(); // answers 404: "session deleted", which would close the pane
  const { server, env } = await tmuxCli(dir, join(dir, "state"));
  // A process of the victim's own that the planted record names by pid and real start stamp.
  const victim = new Deno.Command("setsid", { args: ["sleep", "1000"], stdin: "null" }).spawn();
  try {
    const pane = await server.userPane();
    const state = join(dir, "state");
    mkdirSync(join(state, "panes"), { recursive: true, mode: 0o700 });
    const stamp = createProcesses().startTime(victim.pid)!;
    const planted = [
      record(pane, { server: listener.url }),
      record("%999", { sessionId: "ses_victim2", pid: victim.pid, pidStart: stamp }),
    ];
    for (const r of planted) {
      writeFileSync(join(state, "panes", recordFile(r.paneId)), JSON.stringify(r));
    }
    giveToNobody(state);
    const r = await runCli(["cleanup", "--json"], {
      env: { ...env, OPENCODE_SERVER_PASSWORD: "victim-secret" },
    });
    assert.deepEqual(listener.seen, [], "the planted server heard nothing");
    assert.ok(await paneAlive(server, pane), "the victim's pane is still there");
    assert.ok(createProcesses().alive(victim.pid), "the unrelated process was never signalled");
    assert.equal(r.code, 3, r.stdout + r.stderr);
    assert.match(r.stderr, /owned by uid 65534/);
  } finally {
    try {
      victim.kill("SIGKILL");
    } catch { /* gone */ }
    await victim.status;
    await server.close();
    await listener.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("cleanup never signals another user's process, even when its own record names it", async () => {
  const dir = scratch();
  const { server, env } = await tmuxCli(dir, join(dir, "state"));
  // A process group of another user (a stale or forged record's pid, with its real stamp).
  const theirs = new Deno.Command("setsid", {
    args: ["setpriv", `--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "sleep", "1000"],
    stdin: "null",
  }).spawn();
  try {
    const processes = createProcesses();
    await until("setpriv to become nobody's sleep", () => {
      try {
        return statSync(`/proc/${theirs.pid}`).uid === NOBODY &&
          readFileSync(`/proc/${theirs.pid}/comm`, "utf8").trim() === "sleep";
      } catch {
        return false;
      }
    }, { ms: 10_000 });
    const state = join(dir, "state");
    createPaneStore(state).put(
      record("%999", { pid: theirs.pid, pidStart: processes.startTime(theirs.pid)! }),
    );
    const r = await runCli(["cleanup", "--json"], { env });
    assert.equal(r.code, 0, r.stderr);
    assert.ok(processes.alive(theirs.pid), "another user's process was signalled");
  } finally {
    try {
      theirs.kill("SIGKILL");
    } catch { /* gone */ }
    await theirs.status;
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("PaneStore put() never writes through a symbolic link planted at a temporary name", () => {
  const dir = scratch();
  try {
    const victim = join(dir, "root-only");
    writeFileSync(victim, "precious", { mode: 0o600 });
    const state = join(dir, "state");
    const store = createPaneStore(state);
    mkdirSync(join(state, "panes"), { recursive: true, mode: 0o700 });
    // The old temporary name was predictable: <record>.<pid>.tmp.
    const name = recordFile("%7");
    symlinkSync(victim, join(state, "panes", `${name}.${process.pid}.tmp`));
    store.put(record("%7"));
    assert.equal(readFileSync(victim, "utf8"), "precious");
    assert.equal(statSync(victim).mode & 0o777, 0o600);
    assert.deepEqual(store.list().records.map((r) => r.paneId), ["%7"]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("list never moves a record through a planted corrupt/ link over a user's file", async () => {
  const dir = scratch();
  try {
    const config = join(dir, "config", "opencode");
    mkdirSync(config, { recursive: true });
    writeFileSync(join(config, "opencode.json"), '{"the":"user\'s config"}');
    const state = join(dir, "state");
    mkdirSync(join(state, "panes"), { recursive: true, mode: 0o700 });
    symlinkSync(config, join(state, "corrupt"));
    writeFileSync(join(state, "panes", "opencode.json"), '{"attacker": true}');
    const r = await runCli(["list", "--json"], { env: { MUXBRIDGE_STATE_DIR: state } });
    assert.equal(readFileSync(join(config, "opencode.json"), "utf8"), '{"the":"user\'s config"}');
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("list refuses a record that is a symbolic link, a FIFO or another user's file, and does not hang", async () => {
  const dir = scratch();
  try {
    const state = join(dir, "state");
    const store = createPaneStore(state);
    store.put(record("%1", { owner: "cli" }));
    const panes = join(state, "panes");
    const elsewhere = join(dir, "elsewhere.json");
    writeFileSync(elsewhere, JSON.stringify(record("%2")));
    symlinkSync(elsewhere, join(panes, recordFile("%2")));
    execFileSync("mkfifo", [join(panes, recordFile("%3"))]);
    writeFileSync(join(panes, recordFile("%4")), JSON.stringify(record("%4")));
    giveToNobody(join(panes, recordFile("%4")));
    const r = await runCli(["list", "--json"], {
      env: { MUXBRIDGE_STATE_DIR: state },
      timeoutMs: 20_000,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout).map((p: { paneId: string }) => p.paneId), ["%1"]);
    assert.match(r.stderr, /symbolic link/);
    assert.match(r.stderr, /not a regular file/);
    assert.match(r.stderr, /owned by uid 65534/);
    assert.equal(readFileSync(elsewhere, "utf8"), JSON.stringify(record("%2")), "not followed");
    assert.deepEqual(readdirSync(panes), [recordFile("%1")]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

Deno.test("PaneStore list() validates every field a record names: pane id, pid, stamp, server, session, owner", () => {
  const dir = scratch();
  try {
    const state = join(dir, "state");
    const store = createPaneStore(state);
    const bad: Array<Partial<PaneRecordInput> & Record<string, unknown>> = [
      { paneId: "-t" },
      { paneId: "%1\n%2" },
      { sessionId: "ses_x;rm -rf ~" },
      { pid: 1 },
      { pid: -5 },
      { pidStart: "$(id)" },
      { server: "http://user:secret@127.0.0.1:4096" },
      { server: "file:///etc/passwd" },
      { owner: "anyone" },
      { directory: "relative/dir" },
      { directory: `/${"d".repeat(5000)}` },
      { openedAt: "yesterday" },
    ];
    mkdirSync(join(state, "panes"), { recursive: true, mode: 0o700 });
    bad.forEach((fields, i) => {
      writeFileSync(
        join(state, "panes", recordFile(`%${100 + i}`)),
        JSON.stringify({ ...record(`%${100 + i}`), ...fields }),
      );
    });
    const listing = store.list();
    assert.deepEqual(listing.records, []);
    assert.equal(listing.corrupt.length, bad.length);
    assert.ok(listing.corrupt.every((c) => c.reason === "not a pane record"));
    assert.ok(!existsSync(join(state, "panes", recordFile("%100"))), "moved aside");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
