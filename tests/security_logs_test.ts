/**
 * Security findings about logs (issue 17, item 3), reproduced as found: the bridge's log
 * (`--log-file`, `log_file`) and the plugin's log hold titles, paths and the server URL, so
 * they are created 0600, never widened (Deno's `appendFile` made every append 0666), never
 * written through a symbolic link, and never written when another user owns them.
 */

import assert from "node:assert/strict";
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileSink } from "../lib/sys/log.ts";
import { startBridge } from "./helpers/bridge_process.ts";
import { giveToNobody } from "./helpers/listener.ts";
import { isType } from "./helpers/real_life.ts";
import { loadPlugin, pluginInput } from "./helpers/load_plugin.ts";
import { until } from "./helpers/until.ts";

const mode = (path: string) => statSync(path).mode & 0o777;

function withDir(fn: (dir: string) => void | Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "muxbridge-sec-log-"));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

Deno.test(
  "fileSink() creates the log 0600 and never widens it; a wider one is narrowed",
  withDir((dir) => {
    const fresh = join(dir, "fresh.log");
    const sink = fileSink(fresh);
    sink("one\n");
    sink("two\n");
    assert.equal(mode(fresh), 0o600);
    assert.equal(readFileSync(fresh, "utf8"), "one\ntwo\n");

    const wide = join(dir, "wide.log");
    writeFileSync(wide, "old\n");
    chmodSync(wide, 0o644);
    fileSink(wide)("new\n");
    assert.equal(mode(wide), 0o600);
    assert.equal(readFileSync(wide, "utf8"), "old\nnew\n");
  }),
);

Deno.test(
  "fileSink() never writes through a symbolic link, nor into another user's file",
  withDir((dir) => {
    const victim = join(dir, "victim");
    writeFileSync(victim, "precious\n", { mode: 0o600 });
    symlinkSync(victim, join(dir, "link.log"));
    fileSink(join(dir, "link.log"))("planted\n");
    assert.equal(readFileSync(victim, "utf8"), "precious\n");

    const theirs = join(dir, "theirs.log");
    writeFileSync(theirs, "their log\n", { mode: 0o644 });
    giveToNobody(theirs);
    fileSink(theirs)("ours\n");
    assert.equal(readFileSync(theirs, "utf8"), "their log\n");
    assert.equal(mode(theirs), 0o644, "another user's mode is left alone");
  }),
);

Deno.test(
  "bridge --log-file keeps an existing 0600 log 0600 while it logs",
  withDir(async (dir) => {
    const log = join(dir, "bridge.log");
    writeFileSync(log, "", { mode: 0o600 });
    const bridge = startBridge(["--dir", dir, "--log-file", log, "--log-level", "debug"], {
      MUXBRIDGE_STATE_DIR: join(dir, "state"),
      MUXBRIDGE_BACKEND: "none",
      HOME: dir,
    });
    try {
      await bridge.waitFor(isType("ready"));
      await bridge.send({ type: "message.part.delta", properties: {} });
      await bridge.endInput();
      await bridge.waitFor(isType("bye"));
      await bridge.status;
    } finally {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
    }
    assert.match(readFileSync(log, "utf8"), /shutting down/);
    assert.equal(mode(log), 0o600);
  }),
);

Deno.test(
  "the plugin's log is 0600, narrowed when wider, and never written through a symbolic link",
  withDir(async (dir) => {
    // A missing bridge binary: the plugin logs one line about it and starts nothing.
    const bin = join(dir, "no-such-muxbridge");
    mkdirSync(join(dir, "state"));
    const wide = join(dir, "state", "wide.log");
    writeFileSync(wide, "old\n");
    chmodSync(wide, 0o644);
    const hooks = await loadPlugin(join(dir, "state"), pluginInput(dir), { bin, log: wide });
    await until("the plugin to log", () => readFileSync(wide, "utf8").includes("cannot start"));
    await hooks.dispose?.();
    assert.equal(mode(wide), 0o600);

    const victim = join(dir, "victim");
    writeFileSync(victim, "precious\n", { mode: 0o600 });
    const link = join(dir, "state", "link.log");
    symlinkSync(victim, link);
    const linked = await loadPlugin(join(dir, "state"), pluginInput(dir), { bin, log: link });
    await linked.dispose?.();
    assert.equal(readFileSync(victim, "utf8"), "precious\n");
  }),
);
