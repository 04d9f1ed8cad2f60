/**
 * The files a scripted fake multiplexer CLI works on (`tests/fakes/bin/zellij`,
 * `tests/fakes/bin/herdr`): a JSON state file and an argv log in the fixture's scratch directory,
 * the variables that point the fake at them, a runner that adds those to every call, and reading
 * both back. Shared by `zellij_fixture.ts`, `herdr_fixture.ts` and `wezterm_fixture.ts`.
 *
 * @module
 */

import { dirname } from "node:path";
import { createRunner, type Runner } from "../../lib/sys/exec.ts";

/** A fake CLI's files, written. */
export interface FakeCliFiles<S> {
  /** The state file. */
  statePath: string;
  /** The argv log (see {@linkcode parseArgvLog}). */
  logPath: string;
  /**
   * Variables every call of the fake gets: `PATH` (the running Deno first: the fake is a Deno
   * script), `<prefix>_STATE`, `<prefix>_LOG`, then the extra ones. Tests set `<prefix>_FAULT`
   * here.
   */
  env: Record<string, string>;
  /** A real runner that adds {@linkcode FakeCliFiles.env} (a call's own variables win). */
  runner: Runner;
  /** The raw state. */
  readState(): Promise<S>;
  /** Changes the state (under no lock: call it between backend operations only). */
  update(fn: (state: S) => void): Promise<void>;
  /** Every argv the fake received, in order (without the binary). */
  calls(): Promise<string[][]>;
  /** Kills the process group of every pane program the fake started (`state.started`). */
  killStarted(): Promise<void>;
}

/** Parses the fake's argv log: count, NUL, then each element followed by NUL. */
export function parseArgvLog(text: string): string[][] {
  const parts = text.split("\0");
  const calls: string[][] = [];
  let i = 0;
  while (i < parts.length - 1) {
    const n = Number(parts[i]);
    calls.push(parts.slice(i + 1, i + 1 + n));
    i += n + 1;
  }
  return calls;
}

/**
 * Writes the initial state and an empty argv log into `dir`.
 *
 * @param dir The fixture's scratch directory.
 * @param prefix The fake's variable prefix (`FAKE_ZELLIJ`, `FAKE_HERDR`).
 * @param initial The initial state.
 * @param extraEnv More variables for every call.
 * @returns The files and the ways to use them.
 */
export async function writeFakeCliFiles<S extends { started?: number[] }>(
  dir: string,
  prefix: string,
  initial: S,
  extraEnv: Record<string, string> = {},
): Promise<FakeCliFiles<S>> {
  const statePath = `${dir}/state.json`;
  const logPath = `${dir}/argv.log`;
  await Deno.writeTextFile(statePath, JSON.stringify(initial));
  await Deno.writeTextFile(logPath, "");
  const env: Record<string, string> = {
    PATH: `${dirname(Deno.execPath())}:${Deno.env.get("PATH") ?? "/usr/bin:/bin"}`,
    [`${prefix}_STATE`]: statePath,
    [`${prefix}_LOG`]: logPath,
    ...extraEnv,
  };
  const real = createRunner();
  const runner: Runner = (argv, opts) => real(argv, { ...opts, env: { ...env, ...opts.env } });
  const readState = async () => JSON.parse(await Deno.readTextFile(statePath)) as S;
  return {
    statePath,
    logPath,
    env,
    runner,
    readState,
    async update(fn) {
      const state = await readState();
      fn(state);
      await Deno.writeTextFile(statePath, JSON.stringify(state));
    },
    calls: async () => parseArgvLog(await Deno.readTextFile(logPath)),
    async killStarted() {
      for (const pid of (await readState()).started ?? []) {
        try {
          Deno.kill(-pid, "SIGKILL");
        } catch { /* gone */ }
      }
    },
  };
}
