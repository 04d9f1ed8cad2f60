/**
 * The kitty backend: one kitty window per child session in the tab muxbridge runs in, over
 * kitty's remote control (`docs/backends/kitty.md`).
 *
 * @module
 */

import { layerOf } from "../../lib/backend/_layer.ts";
import type { BackendModule } from "../../lib/backend/backend.ts";
import { envInt, envText } from "../../lib/sys/env.ts";
import { KITTY_CAPABILITIES, KITTY_DOCTOR, KITTY_GATE, KITTY_SECTION } from "./_traits.ts";

/** The kitty backend. */
export const kitty: BackendModule<"kitty", typeof KITTY_SECTION> = {
  name: "kitty",
  title: "kitty",
  summary: "kitty >= 0.26 with remote control on: windows in the tab muxbridge runs in",
  detect: {
    envVars: ["KITTY_WINDOW_ID", "KITTY_PID", "KITTY_LISTEN_ON"],
    nesting: { kind: "terminal", rank: 2 },
    read(env) {
      // A window or the terminal's pid says kitty; KITTY_LISTEN_ON alone is only an address.
      const window = envText(env, "KITTY_WINDOW_ID");
      const pid = envText(env, "KITTY_PID");
      if (!window && !pid) return null;
      return layerOf({
        backend: "kitty",
        paneId: window ?? null,
        socket: envText(env, "KITTY_LISTEN_ON"),
        pid: envInt(pid),
      });
    },
  },
  config: { schema: KITTY_SECTION, external: { bin: "program", listen_on: "socket" } },
  version: KITTY_GATE,
  capabilities: KITTY_CAPABILITIES,
  doctor: KITTY_DOCTOR,
  hints: {},
  readme: {
    versions: "≥ 0.26 with remote control on",
    detectedFrom:
      "`KITTY_WINDOW_ID`, `KITTY_PID`, `KITTY_LISTEN_ON` (or `kitty.listen_on`, `kitty.window_id`)",
    spawn: "`@ launch --type=window --keep-focus` by argv",
    close: "`send-text \\x03` → grace → `close-window` (`@ ls`)",
    layout: "`goto-layout` only when the tab holds nothing but the anchor and muxbridge's windows",
    title: "`--title`",
    focusSafe: "yes",
    credentials:
      "a private 0600 file an explicit `/bin/sh -c` sources and removes before `exec` (`launch --env` would be argv)",
    marks: "user vars on ≥ 0.30; none on 0.26",
    verified:
      "**the real kitty 0.26.5 under Xvfb**; `kitten @` and ≥ 0.30/0.40 argv shapes against a fake runner",
  },
  create: async (deps) => (await import("./backend.ts")).createKittyBackend(deps),
};
