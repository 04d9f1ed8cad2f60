/**
 * The isolated home every real OpenCode process of the tests runs in (the server of
 * `opencode_server.ts`, the TUI of `opencode_tui.ts`): HOME and the XDG folders inside a
 * temporary directory, OpenCode's config naming only a loopback mock model, the offline stubs of
 * OpenCode's first-run `npm install @opencode-ai/plugin`, and a git project. Nothing it prepares
 * can reach the network (docs/opencode.md, "A server for tests").
 *
 * @module
 */

import { createRealClock, waitFor } from "../../lib/sys/clock.ts";
import { createProcesses } from "../../lib/sys/processes.ts";

/** The opencode-ai version package.json pins (the plugin stub must name the same one). */
export const OPENCODE_VERSION = "1.18.33";

const clock = createRealClock();
const processes = createProcesses();

/** Options of {@linkcode prepareOpencodeHome}. */
export interface OpencodeHomeOptions {
  /** The mock model's base URL (`startMockModel().baseUrl`). */
  mockUrl: string;
  /** Whether the mock model may call tools (the TUI's parent turn calls `task`). */
  toolCall: boolean;
  /** More top-level keys of OpenCode's config (e.g. `permission`). @default none */
  config?: Record<string, unknown>;
}

async function git(cwd: string, args: string[]): Promise<void> {
  const out = await new Deno.Command("git", {
    args,
    cwd,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
    env: { GIT_CONFIG_NOSYSTEM: "1", HOME: cwd },
  }).output();
  if (!out.success) {
    throw new Error(`git ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
}

/**
 * The `opencode.json` both OpenCode lines' tests start from: the mock model on loopback as the
 * only provider, nothing that reaches the network (autoupdate, share, LSP, formatters), then
 * `extra` on top. 2.x reads the same file and shape (it migrates `provider` itself).
 *
 * @param mockUrl The mock model's base URL.
 * @param toolCall Whether the model may call tools.
 * @param extra Keys that replace or add to the above.
 * @returns The config object.
 */
export function mockModelConfig(
  mockUrl: string,
  toolCall: boolean,
  extra: Record<string, unknown> | undefined,
): Record<string, unknown> {
  return {
    $schema: "https://opencode.ai/config.json",
    autoupdate: false,
    share: "disabled",
    snapshot: false,
    lsp: false,
    formatter: false,
    model: "mock/mock-model",
    small_model: "mock/mock-model",
    enabled_providers: ["mock"],
    provider: {
      mock: {
        npm: "@ai-sdk/openai-compatible",
        name: "Mock (loopback)",
        options: { baseURL: mockUrl, apiKey: "mock-key" },
        models: {
          "mock-model": {
            name: "Mock Model",
            tool_call: toolCall,
            limit: { context: 32000, output: 4096 },
          },
        },
      },
    },
    ...extra,
  };
}

/**
 * Writes OpenCode's config, the plugin-install stub and a git project (`<base>/project`) under
 * `base`.
 *
 * @param base The temporary directory (the caller removes it).
 * @param options The mock model and whether it calls tools.
 * @returns The isolated environment: HOME, the XDG folders, the `OPENCODE_DISABLE_*` switches
 *   and an npm that cannot fetch.
 */
export async function prepareOpencodeHome(
  base: string,
  options: OpencodeHomeOptions,
): Promise<Record<string, string>> {
  const dirs = {
    HOME: `${base}/home`,
    XDG_CONFIG_HOME: `${base}/config`,
    XDG_DATA_HOME: `${base}/data`,
    XDG_CACHE_HOME: `${base}/cache`,
    XDG_STATE_HOME: `${base}/state`,
  };
  const configDir = `${dirs.XDG_CONFIG_HOME}/opencode`;
  for (const d of [...Object.values(dirs), `${configDir}/node_modules`, `${base}/project`]) {
    await Deno.mkdir(d, { recursive: true });
  }
  await Deno.writeTextFile(
    `${configDir}/opencode.json`,
    JSON.stringify(mockModelConfig(options.mockUrl, options.toolCall, options.config)),
  );
  // OpenCode's installer skips when node_modules/ exists and the lock lists every dependency
  // (docs/opencode.md); without this a configured plugin waits on the npm registry. The
  // package.json it would leave is also the silent-skip trap of a `file://` plugin.
  const deps = { dependencies: { "@opencode-ai/plugin": OPENCODE_VERSION } };
  await Deno.writeTextFile(`${configDir}/package.json`, JSON.stringify(deps));
  await Deno.writeTextFile(
    `${configDir}/package-lock.json`,
    JSON.stringify({ packages: { "": deps } }),
  );
  const project = `${base}/project`;
  await git(project, ["init", "-q", "."]);
  await git(project, [
    "-c",
    "user.email=t@t",
    "-c",
    "user.name=t",
    "commit",
    "-q",
    "--allow-empty",
    "-m",
    "init",
  ]);
  return {
    ...dirs,
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_SHARE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_DEFAULT_PLUGINS: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
    OPENCODE_DISABLE_CLAUDE_CODE: "1",
    // Belt and braces: should OpenCode still run npm, it fails at once instead of fetching.
    npm_config_offline: "true",
    npm_config_registry: "http://127.0.0.1:9/",
  };
}

/**
 * Stops a process: SIGTERM, up to `graceMs` for the exit, then SIGKILL.
 *
 * @param pid The process.
 * @param graceMs The most to wait between the two signals.
 * @returns Once it is gone or was sent SIGKILL.
 */
export async function stopProcess(pid: number, graceMs: number): Promise<void> {
  try {
    Deno.kill(pid, "SIGTERM");
  } catch {
    return; // already gone
  }
  const gone = await waitFor(clock, () => !processes.alive(pid), {
    deadline: clock.now() + graceMs,
    maxIntervalMs: 50,
  });
  if (!gone) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* gone meanwhile */ }
  }
}
