/**
 * `muxbridge detect`: which multiplexer this process runs in, every layer found, and the harness.
 *
 * @module
 */

import { detectIdentity } from "../../backend/identity.ts";
import type { Command } from "./_command.ts";

/** The `detect` command. */
export const detectCommand: Command = {
  name: "detect",
  summary: "Show which multiplexer (and harness) this process runs in",
  usage: "muxbridge detect [--json]",
  help: [
    "Reads the environment only; runs nothing. Exit 0 even when nothing is found.",
    "When several layers are found (tmux inside kitty), the innermost wins: a terminal (kitty,",
    "WezTerm, cmux) holds the multiplexers in it; where the environment cannot tell, each",
    "backend's rank decides (the README's Backends section gives the order).",
    "",
    "Example:",
    "  muxbridge detect --json",
  ].join("\n"),
  flags: {},
  positionals: [0, 0],
  json: true,
  run(_inv, deps) {
    const id = detectIdentity(deps.env, deps.backends);
    const lines = [`backend: ${id.backend ?? "none"}`];
    for (const layer of id.layers) {
      const extra = Object.entries(layer).filter(([k]) => k !== "backend" && k !== "paneId").map((
        [k, v],
      ) => `${k}=${v}`);
      lines.push(
        `  layer ${layer.backend}: pane ${layer.paneId ?? "?"}${
          extra.length ? ` (${extra.join(", ")})` : ""
        }`,
      );
    }
    const h = id.harness;
    lines.push(
      `harness: ${h.name ?? "none"}${h.sessionId ? ` session ${h.sessionId}` : ""}${
        h.pid ? ` pid ${h.pid}` : ""
      }`,
    );
    return Promise.resolve({ json: id, text: `${lines.join("\n")}\n` });
  },
};
