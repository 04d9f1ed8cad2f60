/**
 * `doctor` and every other command read the pane controls from the config: `exclude`,
 * `max_panes`, `failed_pane_hold_ms`, `status_in_title`; an invalid glob is a config error that
 * names the key.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../helpers/cli_process.ts";

function withConfig(
  config: unknown,
  fn: (env: Record<string, string>) => Promise<void>,
): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "muxbridge-controls-"));
    try {
      writeFileSync(join(dir, "config.json"), JSON.stringify(config));
      await fn({
        HOME: dir,
        MUXBRIDGE_CONFIG: join(dir, "config.json"),
        MUXBRIDGE_STATE_DIR: join(dir, "state"),
        MUXBRIDGE_BACKEND: "none",
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

Deno.test(
  "doctor shows the pane controls it read from the config",
  withConfig(
    { exclude: ["explore", "*review*"], max_panes: 3, failed_pane_hold_ms: 0 },
    async (env) => {
      const r = await runCli(["doctor", "--json"], { env });
      const checks = JSON.parse(r.stdout).checks as Array<{ name: string; detail: string }>;
      const controls = checks.find((c) => c.name === "pane controls");
      assert.equal(
        controls?.detail,
        'exclude "explore", "*review*"; max_panes 3; failed panes close at once; live state in titles',
      );
    },
  ),
);

Deno.test(
  "an exclude pattern that is no glob stops every command with exit 3, naming the key",
  withConfig({ exclude: ["fine", "[oops"] }, async (env) => {
    const r = await runCli(["list"], { env });
    assert.equal(r.code, 3);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /key "exclude\.1": not a valid glob: a \[ is never closed/);
    assert.equal(r.stderr.trim().split("\n").length, 1);
  }),
);
