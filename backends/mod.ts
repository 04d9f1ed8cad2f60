/**
 * The backend registry: every backend muxbridge has, one line each, in the order the `backend`
 * config key lists them. Adding a backend is its folder (`backends/<name>/`, whose `mod.ts`
 * declares everything about it), its tests and one line here; identity, config, selection,
 * `doctor`, `detect`, `schema` and the README's tables read this list, and the session loop and
 * the CLI never branch on a backend's name.
 *
 * Only `main.ts` (and scripts and tests) import this file: the rest of muxbridge is handed the
 * list. Each module here is light (names, schemas, texts): a backend's code is loaded when it is
 * first built, so a bridge holds the code of the one backend it runs (`bench/idle.ts` measures
 * it).
 *
 * @module
 */

import type { BackendModule } from "../lib/backend/backend.ts";
import { cmux } from "./cmux/mod.ts";
import { herdr } from "./herdr/mod.ts";
import { kitty } from "./kitty/mod.ts";
import { provider } from "./provider/mod.ts";
import { tmux } from "./tmux/mod.ts";
import { wezterm } from "./wezterm/mod.ts";
import { zellij } from "./zellij/mod.ts";

/** Every backend, in the order the `backend` config key lists them. */
export const BACKENDS = [
  tmux,
  zellij,
  herdr,
  cmux,
  kitty,
  wezterm,
  provider,
] as const satisfies readonly BackendModule[];

/** A backend's name. */
export type BackendName = typeof BACKENDS[number]["name"];
