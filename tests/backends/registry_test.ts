/**
 * The backend registry (`backends/mod.ts`): one complete list of backend modules, each declaring
 * everything about its backend, each light (its code loaded only when built).
 */

import assert from "node:assert/strict";
import { BACKENDS } from "../../backends/mod.ts";
import { readVersion } from "../../lib/backend/_version_gate.ts";
import { BACKEND_NAME, type BackendModule } from "../../lib/backend/backend.ts";
import { createBackend } from "../../lib/backend/create_backend.ts";
import { configJsonSchema, configSchema } from "../../lib/config/config.ts";
import { precedence } from "../../lib/backend/identity.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createFakeRunner } from "../fakes/fake_runner.ts";
import { resolveConfig } from "../helpers/config.ts";

const ROOT = new URL("../../", import.meta.url);
const modules: readonly BackendModule[] = BACKENDS;

/** The folders under backends/. */
function folders(): string[] {
  return [...Deno.readDirSync(new URL("backends/", ROOT))].filter((e) => e.isDirectory)
    .map((e) => e.name).sort();
}

/** The static imports of a file (`import … from "x"`, `export … from "x"`). */
function staticImports(url: URL): string[] {
  const text = Deno.readTextFileSync(url);
  return [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+"([^"]+)";/gms)].map((m) => m[1]);
}

Deno.test("BACKENDS has one module per backend folder, named as its folder, in the contract's order", () => {
  assert.deepEqual(modules.map((b) => b.name).sort(), folders());
  for (const b of modules) assert.match(b.name, BACKEND_NAME, b.name);
  assert.deepEqual(modules.map((b) => b.name), [
    "tmux",
    "zellij",
    "herdr",
    "cmux",
    "kitty",
    "wezterm",
    "provider",
  ]);
});

Deno.test("backends/mod.ts imports only the backends' mod.ts files and the module type", () => {
  const imports = staticImports(new URL("backends/mod.ts", ROOT));
  assert.deepEqual(
    imports.filter((i) => i !== "../lib/backend/backend.ts").sort(),
    folders().map((f) => `./${f}/mod.ts`),
  );
});

Deno.test("a backend's mod.ts never loads its code: backend.ts is reached only by create()", () => {
  for (const folder of folders()) {
    const seen = new Set<string>();
    const visit = (url: URL) => {
      if (seen.has(url.href)) return;
      seen.add(url.href);
      for (const i of staticImports(url)) {
        if (i.startsWith(".")) visit(new URL(i, url));
      }
    };
    visit(new URL(`backends/${folder}/mod.ts`, ROOT));
    const loaded = [...seen].filter((h) => h.includes(`/backends/${folder}/`))
      .map((h) => h.slice(h.lastIndexOf("/") + 1));
    assert.deepEqual(loaded.filter((f) => !f.startsWith("_") && f !== "mod.ts"), [], folder);
    assert.ok(!loaded.includes("_command.ts"), `${folder}/mod.ts loads _command.ts`);
  }
});

Deno.test("detection orders the layers tmux > zellij > herdr > cmux > kitty > wezterm, terminals outermost", () => {
  assert.deepEqual(precedence(modules), ["tmux", "zellij", "herdr", "cmux", "kitty", "wezterm"]);
  for (const kind of ["multiplexer", "terminal"] as const) {
    const ranks = modules.flatMap((b) =>
      b.detect?.nesting.kind === kind ? [b.detect.nesting.rank] : []
    );
    assert.equal(new Set(ranks).size, ranks.length, `ranks among ${kind}s are unique`);
  }
  assert.equal(modules.find((b) => b.name === "provider")?.detect, null);
});

Deno.test("each module's config section is strict, has its defaults, and declares its programs and sockets", () => {
  const schema = configSchema(modules);
  const sections = (configJsonSchema(modules) as {
    properties: Record<string, { properties?: Record<string, unknown> }>;
  }).properties;
  for (const b of modules) {
    const section = b.config.schema.parse(undefined) as Record<string, unknown>;
    assert.equal(typeof section, "object", b.name);
    assert.equal(b.config.schema.safeParse({ nope: 1 }).success, false, `${b.name} is strict`);
    const keys = Object.keys(
      (schema.parse({}) as Record<string, Record<string, unknown>>)[b.name],
    );
    assert.deepEqual(keys, Object.keys(section), b.name);
    // Every key that names a program, a file, a socket or a session is one bridge.hello may
    // not set.
    const shape = sections[b.name].properties ?? {};
    for (const key of Object.keys(shape)) {
      if (/^(bin|command|session|target)$|socket|listen_on|_file$|_dir$/.test(key)) {
        assert.ok(key in b.config.external, `${b.name}.${key} is declared external`);
      }
    }
    for (const key of Object.keys(b.config.external)) {
      assert.ok(key in shape, `${b.name}.${key} is a key of its section`);
    }
  }
});

Deno.test("each module's version gate reads its own minimum", () => {
  for (const b of modules) {
    if (b.version.scheme === "protocol") continue;
    const gate = b.version;
    const min = gate.scheme === "date" ? readVersion(gate, gate.min) : { semver: gate.min };
    assert.ok(min, `${b.name} reads ${gate.min}`);
    assert.equal(readVersion(gate, "no version here"), null, b.name);
  }
});

Deno.test("each module builds its backend by loading its code, runs nothing, and declares at least what it can do", async () => {
  const fake = createFakeRunner(); // throws on any call: building a backend runs nothing
  for (const b of modules) {
    const backend = await createBackend(b, {
      run: fake.run,
      env: () => undefined,
      clock: createRealClock(),
      config: resolveConfig({ env: () => undefined }),
      identity: { backend: null, layers: [], harness: { name: null } },
      log: silentLogger,
    });
    assert.equal(backend.name, b.name);
    for (const [key, on] of Object.entries(backend.capabilities)) {
      if (on) {
        assert.equal(b.capabilities[key as keyof typeof b.capabilities], true, `${b.name} ${key}`);
      }
    }
    await backend.dispose?.();
  }
  assert.equal(fake.calls.length, 0);
});

Deno.test("each backend has its document under docs/backends/", () => {
  for (const b of modules) {
    assert.ok(
      Deno.statSync(new URL(`docs/backends/${b.name}.md`, ROOT)).isFile,
      `docs/backends/${b.name}.md`,
    );
  }
});
