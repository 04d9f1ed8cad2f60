/**
 * Regenerates `lib/install/plugin_source.ts`, the plugins the binary carries, by bundling the
 * modules of `plugin/` with the pinned Bun (`node_modules/.bin/bun build`, ESM for node, `node:`
 * modules left as imports, nothing minified so a user can read what runs):
 *
 * - `muxbridge.js`, the OpenCode 1.x plugin (from `plugin/muxbridge.ts`), one file for 1.x's
 *   `plugin/` folder;
 * - the OpenCode 2.x plugin folder: `package.json`, `server.js` (from `plugin/server.ts`) and
 *   `tui.js` (from `plugin/tui.ts`).
 *
 * Each bundle starts with a header naming it, its muxbridge version and where it came from;
 * `muxbridge install` and `doctor` read the version there. The same sources and the same Bun give
 * the same bytes (the bundles name their modules by paths relative to the repository), so
 * `--check` fails exactly when the carried plugins are stale (a test runs it).
 *
 * Usage: deno run -A scripts/gen_plugin_source.ts [--check]
 *
 * @module
 */

const ROOT = new URL("../", import.meta.url);
const TARGET = new URL("lib/install/plugin_source.ts", ROOT);
const BUN = new URL("node_modules/.bin/bun", ROOT);

/** What the binary carries. */
export interface Artefacts {
  /** The text of the OpenCode 1.x plugin file `muxbridge.js`. */
  v1: string;
  /** The files of the OpenCode 2.x plugin folder, by name. */
  v2: Record<string, string>;
}

/** The first lines of a bundle (the bundler drops the sources' comments; these stay). */
function header(version: string, what: string, entry: string, note: string[]): string {
  return [
    `// muxbridge OpenCode plugin ${version} (${what})`,
    `// Bundled from ${entry} of muxbridge by scripts/gen_plugin_source.ts. \`muxbridge install\``,
    "// writes this file and replaces it; `muxbridge uninstall` removes it. Do not edit it here.",
    ...note.map((line) => `// ${line}`),
    "",
  ].join("\n");
}

/** What each bundle's header says about it. */
const NOTES = {
  v1: [
    "OpenCode 1.x runs `server(input, options)` of the default export. OpenCode 2.x loads this",
    "folder too and requires `{ id, setup }`: `setup` does nothing there, on purpose (muxbridge on",
    "2.x is plugins/muxbridge), and the id differs from that plugin's so both can be installed.",
  ],
  server: [
    "Does nothing, on purpose: OpenCode 2.x requires a server entry in a plugin folder, but its",
    "server runs in the per-user service, far from the terminal; muxbridge works in tui.js.",
  ],
  tui: [
    "Runs in every OpenCode 2.x TUI: in muxbridge's panes (MUXBRIDGE_PANE_SESSION) it keeps the",
    "view on the child; elsewhere it runs one `muxbridge bridge` for the TUI and feeds it.",
  ],
};

/** Bundles one entry of `plugin/` (run from the repository root, so paths are relative). */
async function bundle(entry: string): Promise<string> {
  const out = await new Deno.Command(BUN, {
    args: ["build", entry, "--target=node", "--format=esm", "--external=node:*"],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const err = new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`bun build ${entry} failed:\n${err}`);
  const text = new TextDecoder().decode(out.stdout);
  // Only node: modules may remain imports: anything else would fail inside OpenCode's Bun.
  for (const m of text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)"/gm)) {
    if (!m[1].startsWith("node:")) throw new Error(`${entry}: the bundle imports "${m[1]}"`);
  }
  return text;
}

/**
 * Bundles the plugins.
 *
 * @param version muxbridge's version (deno.json).
 * @returns The artefacts.
 */
export async function buildArtefacts(version: string): Promise<Artefacts> {
  const [v1, server, tui] = await Promise.all([
    bundle("plugin/muxbridge.ts"),
    bundle("plugin/server.ts"),
    bundle("plugin/tui.ts"),
  ]);
  const pkg = {
    name: "muxbridge-opencode-plugin",
    version,
    description: "muxbridge for OpenCode 2.x: a multiplexer pane per child session, beside the " +
      "TUI that started it. Written by `muxbridge install`, removed by `muxbridge uninstall`.",
    private: true,
    type: "module",
    exports: { "./server": "./server.js", "./tui": "./tui.js" },
  };
  return {
    v1: header(version, "OpenCode 1.x, muxbridge.js", "plugin/muxbridge.ts", NOTES.v1) + v1,
    v2: {
      "package.json": `${JSON.stringify(pkg, null, 2)}\n`,
      "server.js": header(version, "OpenCode 2.x, server entry", "plugin/server.ts", NOTES.server) +
        server,
      "tui.js": header(version, "OpenCode 2.x, TUI entry", "plugin/tui.ts", NOTES.tui) + tui,
    },
  };
}

/**
 * The module text that carries the artefacts.
 *
 * @param a The artefacts.
 * @returns The text of `lib/install/plugin_source.ts`.
 */
export function pluginSourceModule(a: Artefacts): string {
  const files = Object.entries(a.v2).map(([name, text]) =>
    `  ${JSON.stringify(name)}: ${JSON.stringify(text)},`
  );
  return [
    "/**",
    " * The OpenCode plugins the binary carries, bundled from `plugin/` (see `plugin/README.md`).",
    " *",
    " * Generated by `deno run -A scripts/gen_plugin_source.ts`; do not edit. A test fails when it",
    " * differs from what the script makes of `plugin/`.",
    " *",
    " * @module",
    " */",
    "",
    "/** `muxbridge.js`, the OpenCode 1.x plugin, which `muxbridge install` writes to `plugin/`. */",
    `export const PLUGIN_V1: string = ${JSON.stringify(a.v1)};`,
    "",
    "/** The files of the OpenCode 2.x plugin folder `plugins/muxbridge/`, by name. */",
    "export const PLUGIN_V2_FILES: Readonly<Record<string, string>> = {",
    ...files,
    "};",
    "",
  ].join("\n");
}

/** Formats module text the way `deno fmt` does (the file must pass `deno fmt --check`). */
async function denoFmt(text: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--ext=ts", "-"],
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const out = await child.output();
  if (!out.success) throw new Error("deno fmt failed");
  return new TextDecoder().decode(out.stdout);
}

if (import.meta.main) {
  const { version } = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const want = await denoFmt(pluginSourceModule(await buildArtefacts(version)));
  let have = "";
  try {
    have = await Deno.readTextFile(TARGET);
  } catch { /* not generated yet */ }
  if (Deno.args.includes("--check")) {
    if (have !== want) {
      console.error(
        "lib/install/plugin_source.ts is stale: run deno run -A scripts/gen_plugin_source.ts",
      );
      Deno.exit(1);
    }
  } else if (have !== want) {
    await Deno.writeTextFile(TARGET, want);
    console.log("wrote lib/install/plugin_source.ts");
  }
}
