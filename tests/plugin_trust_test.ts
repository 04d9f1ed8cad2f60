/**
 * The plugin runs a recorded command only when it can trust it (issue 23: another local user
 * recreated the recorded binary's path and the plugin ran it): the binary, the sidecar that
 * names it and every folder above them must be the user's or root's and writable by nobody else
 * (OpenSSH's StrictModes rule; a sticky folder such as /tmp may be writable by others). Checked
 * on real files in temporary folders; the foreign owner is `nobody`, which needs root to chown
 * (skipped visibly otherwise).
 */

import assert from "node:assert/strict";
import { createRealClock, waitFor } from "../lib/sys/clock.ts";
import { PLUGIN_V1 } from "../lib/install/plugin_source.ts";
import { commandTrustProblem, trustProblem } from "../plugin/src/trust.ts";
import { setEnvForFile } from "./helpers/env_scope.ts";
import { pluginInput } from "./helpers/load_plugin.ts";
import { requirement, requires } from "./helpers/requires.ts";

const clock = createRealClock();
const STATE = Deno.makeTempDirSync({ prefix: "muxbridge-trust-state-" });
setEnvForFile({
  MUXBRIDGE_BIN: undefined,
  MUXBRIDGE_PLUGIN_LOG: undefined,
  MUXBRIDGE_STATE_DIR: STATE,
});
globalThis.addEventListener("unload", () => Deno.removeSync(STATE, { recursive: true }));

const ROOT = Deno.uid() === 0;
const NOBODY = 65534;
const AS_ROOT = requires("a file owned by another user (chown to nobody)", [
  requirement("root (to chown a file to nobody)", ROOT, "run the tests as root, as CI does"),
]);

/** A private temporary folder with an executable `bin` in it that records that it ran. */
async function folder(): Promise<{ dir: string; bin: string; ran: string }> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-trust-" });
  const bin = `${dir}/muxbridge`;
  const ran = `${dir}/ran`;
  await Deno.writeTextFile(bin, `#!/bin/sh\necho ran >> "${ran}"\nexec cat > /dev/null\n`);
  await Deno.chmod(bin, 0o755);
  return { dir, bin, ran };
}

Deno.test("trustProblem() accepts the user's private files, root's system files and a sticky /tmp above them", async () => {
  const { dir, bin } = await folder();
  try {
    assert.equal(trustProblem(bin), null);
    assert.equal(trustProblem("/bin/sh"), null);
    assert.equal(trustProblem(`${dir}/missing`), null, "a missing file fails to run, no more");
    assert.equal(commandTrustProblem(["/bin/sh", bin, "--flag", "relative"]), null);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("trustProblem() refuses a group- or other-writable file or folder above it, a relative path, and a link through such a folder", async () => {
  const { dir, bin } = await folder();
  try {
    await Deno.chmod(bin, 0o775);
    assert.match(trustProblem(bin)!, /muxbridge is writable by its group/);
    await Deno.chmod(bin, 0o757);
    assert.match(trustProblem(bin)!, /is writable by others/);
    await Deno.chmod(bin, 0o755);

    const open = `${dir}/open`;
    await Deno.mkdir(open);
    await Deno.chmod(open, 0o775);
    await Deno.copyFile(bin, `${open}/muxbridge`);
    assert.match(
      trustProblem(`${open}/muxbridge`)!,
      new RegExp(`${open} is writable by its group`),
    );
    assert.match(
      trustProblem(`${open}/missing`)!,
      /writable by its group/,
      "nor may it appear there",
    );
    // The same folder with the sticky bit, as /tmp has: nobody else can replace what is ours.
    await Deno.chmod(open, 0o1777);
    assert.equal(trustProblem(`${open}/muxbridge`), null);
    await Deno.chmod(open, 0o775);

    // A link in a good folder to a binary in a bad one, and the other way round.
    await Deno.symlink(`${open}/muxbridge`, `${dir}/via-link`);
    assert.match(trustProblem(`${dir}/via-link`)!, /writable by its group/);
    await Deno.symlink(bin, `${open}/link-to-good`);
    assert.match(trustProblem(`${open}/link-to-good`)!, /writable by its group/);

    assert.match(trustProblem("relative/muxbridge")!, /not an absolute path/);
    assert.match(commandTrustProblem(["muxbridge"])!, /not an absolute path/);
    assert.match(commandTrustProblem(["/bin/sh", `${open}/muxbridge`])!, /writable by its group/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name: "trustProblem() refuses a file or a folder owned by another user",
  ...AS_ROOT,
  async fn() {
    const { dir, bin } = await folder();
    try {
      await Deno.chown(bin, NOBODY, NOBODY);
      assert.match(trustProblem(bin)!, /owned by uid 65534, not by you or root/);
      await Deno.chown(bin, 0, 0);
      const theirs = `${dir}/theirs`;
      await Deno.mkdir(theirs, { mode: 0o755 });
      await Deno.chown(theirs, NOBODY, NOBODY);
      assert.match(trustProblem(`${theirs}/muxbridge`)!, /theirs is owned by uid 65534/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/**
 * Installs the 1.x plugin file and a sidecar naming `bin` into `<dir>/plugin`, loads it, and
 * returns its log once the load has settled.
 */
async function loadInstalled(dir: string, bin: string): Promise<string> {
  const plugin = `${dir}/plugin`;
  await Deno.mkdir(plugin, { recursive: true });
  await Deno.writeTextFile(`${plugin}/muxbridge.js`, PLUGIN_V1);
  await Deno.writeTextFile(
    `${plugin}/muxbridge.json`,
    JSON.stringify({ command: [bin], version: "0.1.0" }),
  );
  return plugin;
}

async function runInstalled(dir: string, plugin: string, instance: string): Promise<string> {
  const log = `${dir}/bridge.log`;
  const { default: { server } } = await import(`${plugin}/muxbridge.js`);
  const hooks = await server(pluginInput(dir), { log, instance });
  const read = () => {
    try {
      return Deno.readTextFileSync(log);
    } catch {
      return "";
    }
  };
  const settled = await waitFor(clock, () => /not running|starting/.test(read()), {
    deadline: clock.now() + 15_000,
    maxIntervalMs: 20,
  });
  assert.ok(settled, read());
  await hooks.dispose();
  return read();
}

Deno.test("the 1.x plugin does not run a recorded binary in a group-writable folder: one log line says why, nothing runs", async () => {
  const { dir, bin, ran } = await folder();
  try {
    const open = `${dir}/open`;
    await Deno.mkdir(open);
    await Deno.chmod(open, 0o775);
    await Deno.copyFile(bin, `${open}/muxbridge`);
    const plugin = await loadInstalled(dir, `${open}/muxbridge`);
    const log = await runInstalled(dir, plugin, "trust-group");
    assert.match(
      log,
      /not running the recorded muxbridge ".*open\/muxbridge": .*open is writable by its group .*MUXBRIDGE_BIN/,
    );
    assert.doesNotMatch(log, /starting/);
    assert.equal(await Deno.stat(ran).catch(() => null), null, "the binary never ran");

    // The same binary in a private folder runs.
    const good = await loadInstalled(`${dir}/good`, bin);
    const ok = await runInstalled(`${dir}/good`, good, "trust-good");
    assert.match(ok, /starting ".*\/muxbridge" \(from muxbridge\.json\)/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test({
  name:
    "the 1.x plugin does not believe a sidecar owned by another user, nor run a binary they own",
  ...AS_ROOT,
  async fn() {
    const { dir, bin, ran } = await folder();
    try {
      const plugin = await loadInstalled(dir, bin);
      await Deno.chown(`${plugin}/muxbridge.json`, NOBODY, NOBODY);
      const log = await runInstalled(dir, plugin, "trust-sidecar");
      assert.match(log, /muxbridge\.json is not trusted: .*owned by uid 65534/);
      assert.doesNotMatch(log, /starting/, "not even muxbridge from PATH instead");

      await Deno.chown(`${plugin}/muxbridge.json`, 0, 0);
      await Deno.chown(bin, NOBODY, NOBODY);
      const again = await runInstalled(dir, plugin, "trust-owner");
      assert.match(again, /muxbridge ".*": .*owned by uid 65534/);
      assert.equal(await Deno.stat(ran).catch(() => null), null, "the binary never ran");
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
