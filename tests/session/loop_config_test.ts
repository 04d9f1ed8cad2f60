import assert from "node:assert/strict";
import { resolveConfig } from "../helpers/config.ts";
import { describeConfigChange, machineConfig } from "../../lib/session/loop_config.ts";

const base = resolveConfig({ env: () => undefined });

Deno.test("machineConfig() takes the close retry delay from close_retry_delay_ms", () => {
  const config = resolveConfig({ env: () => undefined, flags: { close_retry_delay_ms: 40 } });
  assert.equal(machineConfig(config, false).closeRetryDelayMs, 40);
});

Deno.test("machineConfig() keeps a backend's longer minimum pane lifetime", () => {
  assert.equal(machineConfig(base, true, { minPaneLifetimeMs: 9000 }).minPaneLifetimeMs, 9000);
  assert.equal(machineConfig(base, true, { minPaneLifetimeMs: 10 }).minPaneLifetimeMs, 3000);
  assert.equal(machineConfig(base, true).readiness, true);
  assert.equal(machineConfig(base, false).recheck, false);
});

Deno.test("describeConfigChange() says which changed keys take effect when, in one line", () => {
  const after = {
    ...base,
    layout: "tiled" as const,
    idle_close_delay_ms: 9000,
    min_pane_lifetime_ms: 1,
    tmux: { ...base.tmux, target: "%0" },
    log_level: "debug" as const,
  };
  assert.equal(
    describeConfigChange(base, after),
    "layout at the next layout pass; idle_close_delay_ms, min_pane_lifetime_ms at each pane's " +
      "next idle signal; log_level never: the log is set up when the bridge starts; " +
      "tmux for new panes (open panes keep their backend)",
  );
});

Deno.test("describeConfigChange() says nothing when nothing changed", () => {
  assert.equal(describeConfigChange(base, { ...base }), null);
});
