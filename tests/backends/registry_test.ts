/** The backend registry: one row per backend, each backend's code loaded only when it is built. */

import assert from "node:assert/strict";
import { BACKENDS } from "../../backends/mod.ts";
import { CMUX_MIN_VERSION } from "../../backends/cmux/backend.ts";
import { HERDR_MIN_VERSION } from "../../backends/herdr/backend.ts";
import { KITTY_MIN_VERSION } from "../../backends/kitty/backend.ts";
import { PROVIDER_PROTOCOL_VERSION } from "../../backends/provider/protocol.ts";
import { TMUX_MIN_VERSION } from "../../backends/tmux/backend.ts";
import { WEZTERM_MIN_VERSION } from "../../backends/wezterm/_parse.ts";
import { ZELLIJ_MIN_VERSION } from "../../backends/zellij/backend.ts";
import { resolveConfig } from "../../lib/config.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createFakeRunner } from "../fakes/fake_runner.ts";

Deno.test("BACKENDS repeats each backend's own minimum version", () => {
  assert.deepEqual(
    Object.fromEntries(Object.values(BACKENDS).map((row) => [row!.name, row!.minVersion])),
    {
      tmux: TMUX_MIN_VERSION,
      zellij: ZELLIJ_MIN_VERSION,
      herdr: HERDR_MIN_VERSION,
      kitty: KITTY_MIN_VERSION,
      cmux: CMUX_MIN_VERSION,
      wezterm: WEZTERM_MIN_VERSION,
      provider: PROVIDER_PROTOCOL_VERSION,
    },
  );
});

Deno.test("BACKENDS builds each backend by loading its module, without running anything", async () => {
  const fake = createFakeRunner(); // throws on any call: building a backend runs nothing
  for (const row of Object.values(BACKENDS)) {
    const backend = await row!.create({
      run: fake.run,
      env: () => undefined,
      clock: createRealClock(),
      config: resolveConfig({ env: () => undefined }),
      identity: { backend: null, layers: [], harness: { name: null } },
      log: silentLogger,
    });
    assert.equal(backend.name, row!.name);
  }
  assert.equal(fake.calls.length, 0);
});

Deno.test("backends/mod.ts imports no backend module statically", async () => {
  const text = await Deno.readTextFile(new URL("../../backends/mod.ts", import.meta.url));
  const imports = [...text.matchAll(/^import .* from "(.+)";$/gm)].map((m) => m[1]);
  assert.deepEqual(imports, ["../lib/backend/backend.ts", "../lib/identity.ts"]);
});
