/**
 * Runs a documented command line (README.md, docs/cli.md, docs/protocol.md) as a user would type
 * it: through `/bin/sh -c`, with `muxbridge` first on PATH (a shim for `deno run main.ts`, or `MUXBRIDGE_TEST_BIN`), in its own session and
 * process group (so Ctrl+C can be sent the way a terminal sends it, to the whole group), with a
 * fresh temporary HOME and state directory per run and only the environment a situation needs.
 *
 * The situations ("where") a README row can name are the keys of {@linkcode WHERE}: a new one is
 * one entry there. Running the README's own text through a shell is the point here (it is what a
 * user pastes); no argv is joined into a shell string.
 *
 * @module
 */

import { muxbridgeArgv } from "../helpers/bridge_process.ts";
import { runTag } from "../helpers/run_tag.ts";
import { startTmuxServer, type TmuxServer } from "../helpers/tmux_server.ts";
import { until } from "../helpers/until.ts";

/** What one run printed and how it ended. */
export interface SandboxRun {
  /** The exit code. */
  code: number;
  /** The signal that ended it, if one did (null: it exited). */
  signal: Deno.Signal | null;
  /** Standard output. */
  stdout: string;
  /** Standard error. */
  stderr: string;
}

/** Options of {@linkcode Sandbox.run}. */
export interface RunOptions {
  /** The situation, a key of {@linkcode WHERE}. */
  where: string;
  /** More environment. */
  env?: Record<string, string>;
  /** Kill the run (its whole group) after this many ms. @default 60000 */
  timeoutMs?: number;
  /**
   * Runs with the same name share HOME, the state directory and the working directory (a
   * sequence of examples); without one each run gets fresh ones.
   */
  shared?: string;
}

/** A situation: the environment it adds, and what to do while the command runs. */
interface Situation {
  env(box: Sandbox): Promise<Record<string, string>>;
  /** PATH without the system directories (a program is "not installed"). */
  barepath?: boolean;
  /** Variables the run must not have (the sandbox sets HOME and the XDG folders otherwise). */
  unset?: readonly string[];
  /** Directories put on PATH before the system ones. */
  path?(box: Sandbox): Promise<string[]>;
  /**
   * Acts on the running command, given its process group and its output so far. The script is
   * then run with `exec`, so that the group holds the command and its children but no shell, as
   * a terminal's foreground job does.
   */
  during?(group: number, output: () => string): Promise<void>;
}

/**
 * The situations README rows name, by their text in the `where` column.
 */
export const WHERE: Record<string, Situation> = {
  "outside a multiplexer": { env: () => Promise.resolve({}) },
  "in tmux": {
    async env(box) {
      const tmux = await box.tmux();
      return { TMUX: `${tmux.socketPath},${tmux.serverPid},0`, TMUX_PANE: tmux.anchorPane };
    },
  },
  "in a tmux whose server is gone": {
    env: (box) => Promise.resolve({ TMUX: `${box.dir}/no-server,1,0`, TMUX_PANE: "%0" }),
  },
  "without zellij": { env: () => Promise.resolve({}), barepath: true },
  "with tmux 2.9": {
    env: () => Promise.resolve({}),
    async path(box) {
      const dir = `${box.dir}/tmux-2.9`;
      await Deno.mkdir(dir, { recursive: true });
      await Deno.writeTextFile(`${dir}/tmux`, '#!/bin/sh\necho "tmux 2.9"\n');
      await Deno.chmod(`${dir}/tmux`, 0o755);
      return [dir];
    },
  },
  "with another program's muxbridge.js in OpenCode's plugin folder": {
    async env(box) {
      const dir = `${box.dir}/opencode-foreign`;
      await Deno.mkdir(`${dir}/plugin`, { recursive: true });
      await Deno.writeTextFile(`${dir}/plugin/muxbridge.js`, "export const Other = () => ({});\n");
      return { OPENCODE_CONFIG_DIR: dir };
    },
  },
  "with an invalid opencode.json": {
    async env(box) {
      const dir = `${box.dir}/opencode-invalid`;
      await Deno.mkdir(dir, { recursive: true });
      await Deno.writeTextFile(`${dir}/opencode.json`, '{ "plugin": [ }\n');
      return { OPENCODE_CONFIG_DIR: dir };
    },
  },
  "without HOME": { env: () => Promise.resolve({}), unset: ["HOME", "XDG_CONFIG_HOME"] },
  "Ctrl+C while it runs": {
    env: () => Promise.resolve({}),
    async during(group, output) {
      // Ctrl+C once it is under way (its first step printed), to the whole process group.
      await until("the command to get under way", () => /\n1\. /.test(output()), { ms: 60_000 });
      Deno.kill(-group, "SIGINT");
    },
  },
};

/** A temporary place to run README commands in; `close()` removes it and stops its tmux. */
export class Sandbox {
  /** The sandbox directory. */
  readonly dir: string;
  #runs = 0;
  #tmux: Promise<TmuxServer> | null = null;

  private constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * Creates a sandbox with the `muxbridge` shim.
   *
   * @returns The sandbox; always `close()` it.
   */
  static async create(): Promise<Sandbox> {
    const dir = await Deno.makeTempDir({ prefix: "muxbridge-docs-" });
    await Deno.mkdir(`${dir}/bin`);
    const argv = muxbridgeArgv().map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
    await Deno.writeTextFile(`${dir}/bin/muxbridge`, `#!/bin/sh\nexec ${argv} "$@"\n`);
    await Deno.chmod(`${dir}/bin/muxbridge`, 0o755);
    return new Sandbox(dir);
  }

  /**
   * The sandbox's private tmux server, started on first use.
   *
   * @returns The server.
   */
  tmux(): Promise<TmuxServer> {
    return this.#tmux ??= startTmuxServer({ width: 200, height: 50 });
  }

  /**
   * Runs one shell script (README text) in a situation.
   *
   * @param script The command line(s).
   * @param options The situation and more environment.
   * @returns What it printed and how it ended.
   * @throws {Error} When the situation is unknown.
   */
  async run(script: string, options: RunOptions): Promise<SandboxRun> {
    const situation = WHERE[options.where];
    if (!situation) {
      throw new Error(
        `no situation "${options.where}": add it to WHERE in tests/docs/_sandbox.ts (known: ${
          Object.keys(WHERE).join(", ")
        })`,
      );
    }
    const run = options.shared
      ? `${this.dir}/shared-${options.shared}`
      : `${this.dir}/run-${++this.#runs}`;
    for (const d of ["home", "config", "state", "cwd"]) {
      await Deno.mkdir(`${run}/${d}`, { recursive: true });
    }
    const system = situation.barepath ? [] : ["/usr/local/bin", "/usr/bin", "/bin"];
    const path = [`${this.dir}/bin`, ...(await situation.path?.(this)) ?? [], ...system];
    const env = {
      // A user's usual locale. Without a UTF-8 one, tmux prints muxbridge's field separators
      // as "_" and every pane open fails (found here; reported, the tmux backend's to fix).
      LANG: "C.UTF-8",
      PATH: path.join(":"),
      HOME: `${run}/home`,
      XDG_CONFIG_HOME: `${run}/config`,
      XDG_STATE_HOME: `${run}/state`,
      ...(await situation.env(this)),
      ...options.env,
    } as Record<string, string>;
    for (const name of situation.unset ?? []) delete env[name];
    const child = new Deno.Command("/usr/bin/setsid", {
      args: ["/bin/sh", "-c", situation.during ? `exec ${script}` : script],
      cwd: `${run}/cwd`,
      env: { ...env, ...runTag() },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const timer = setTimeout(() => {
      try {
        Deno.kill(-child.pid, "SIGKILL");
      } catch { /* gone */ }
    }, options.timeoutMs ?? 60_000);
    const dec = new TextDecoder();
    let stdout = "";
    let stderr = "";
    const pump = async (stream: ReadableStream<Uint8Array>, add: (t: string) => void) => {
      for await (const chunk of stream) add(dec.decode(chunk, { stream: true }));
    };
    try {
      const reading = Promise.all([
        pump(child.stdout, (t) => (stdout += t)),
        pump(child.stderr, (t) => (stderr += t)),
      ]);
      await situation.during?.(child.pid, () => stdout);
      const status = await child.status;
      await reading;
      return { code: status.code, signal: status.signal, stdout, stderr };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stops the tmux server (if started) and removes the sandbox. */
  async close(): Promise<void> {
    if (this.#tmux) await (await this.#tmux).close();
    await Deno.remove(this.dir, { recursive: true }).catch(() => {});
  }
}
