/**
 * The GitHub workflows parse as YAML and say what the README says they do. They have not run on
 * GitHub; this is the check available here. The YAML parser is python3's PyYAML (no new
 * dependency for one test); scripts/setup.sh installs it (`requires`: skipped and listed locally
 * when absent, a failure in CI).
 */

import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import denoConfig from "../deno.json" with { type: "json" };
import { createRunner } from "../lib/sys/exec.ts";
import { requirement, requires } from "./helpers/requires.ts";

const root = new URL("../", import.meta.url).pathname;
const run = createRunner();
const TO_JSON = "import json, sys, yaml; print(json.dumps(yaml.safe_load(open(sys.argv[1]))))";
const probe = await run(["python3", "-c", "import yaml"], { timeoutMs: 10_000 }).catch(() => null);
const YAML = [
  requirement("PyYAML for python3", probe?.code === 0, "apt-get install -y python3-yaml"),
];

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Job {
  name?: string;
  "runs-on"?: string;
  uses?: string;
  needs?: string | string[];
  steps?: Step[];
  permissions?: Record<string, string>;
}
interface Workflow {
  name: string;
  on: Record<string, unknown>;
  jobs: Record<string, Job>;
  permissions?: Record<string, string>;
}

/** Every `uses:` in a workflow file's text, with the comment after it. */
function usesLines(file: string): Array<{ ref: string; comment: string }> {
  const text = Deno.readTextFileSync(`${root}${file}`);
  return [...text.matchAll(/^\s*(?:-\s+)?uses:\s*(\S+)\s*(#.*)?$/gm)].map((m) => ({
    ref: m[1],
    comment: m[2] ?? "",
  }));
}

/** Remote actions are pinned by a full commit SHA, with the tag named in a comment. */
function assertPinned(file: string): void {
  const lines = usesLines(file).filter((u) => !u.ref.startsWith("./"));
  assert.ok(lines.length > 0, `${file} uses no action`);
  for (const { ref, comment } of lines) {
    assert.match(ref, /^[\w.-]+\/[\w.-]+@[0-9a-f]{40}$/, `${file}: ${ref} is not pinned by SHA`);
    assert.match(comment, /# v\d+/, `${file}: ${ref} does not say which tag it pins`);
  }
}

/** Every checkout leaves no token behind in .git/config. */
function assertNoPersistedCredentials(wf: Workflow): void {
  for (const job of Object.values(wf.jobs)) {
    for (const step of job.steps ?? []) {
      if (step.uses?.startsWith("actions/checkout@")) {
        assert.equal(step.with?.["persist-credentials"], false, `${wf.name}: checkout persists`);
      }
    }
  }
}

async function load(file: string): Promise<Workflow> {
  const r = await run(["python3", "-c", TO_JSON, `${root}${file}`], { timeoutMs: 10_000 });
  assert.equal(r.code, 0, `${file} does not parse: ${r.stderr}`);
  const raw = JSON.parse(r.stdout);
  // YAML 1.1 reads the key `on` as the boolean true.
  return { ...raw, on: raw.on ?? raw["true"] };
}

/**
 * Tasks a workflow may name before they exist, each only in a step whose name says so; once
 * deno.json has one, its entry must go (a test below fails until it does).
 */
const PENDING_TASKS: ReadonlySet<string> = new Set([]);

/** Every `deno task NAME` a workflow runs must exist in deno.json. */
function assertTasksExist(wf: Workflow): void {
  const tasks = Object.keys(denoConfig.tasks);
  for (const job of Object.values(wf.jobs)) {
    for (const step of job.steps ?? []) {
      for (const m of (step.run ?? "").matchAll(/deno task ([\w:-]+)/g)) {
        const pending = PENDING_TASKS.has(m[1]) && step.name?.includes(`deno task ${m[1]}`);
        assert.ok(tasks.includes(m[1]) || pending, `"${step.name}" runs unknown task ${m[1]}`);
      }
      for (const m of (step.run ?? "").matchAll(/(?:^|\s)\.?\/?(scripts\/[\w.]+)/g)) {
        assert.ok(existsSync(`${root}${m[1]}`), `"${step.name}" runs missing ${m[1]}`);
      }
      assert.ok(step.uses || step.run, `a step of ${wf.name} has neither uses nor run`);
    }
  }
}

Deno.test({
  name: "ci.yml runs on push and PR (and as the release gate): setup, test, Bun binary e2e",
  ...requires("the workflow checks", YAML),
  async fn() {
    const wf = await load(".github/workflows/ci.yml");
    assert.deepEqual(Object.keys(wf.on).sort(), ["pull_request", "push", "workflow_call"]);
    assert.deepEqual(wf.permissions, { contents: "read" });
    assert.equal(
      (wf.jobs.test as Job & { env?: Record<string, string> }).env?.CI,
      "true",
      "in CI a missing tool fails",
    );
    const runs = wf.jobs.test.steps!.map((s) => s.run ?? s.uses);
    for (
      const expected of [
        "./scripts/setup.sh",
        "npx deno task test",
        "npx deno task test:binary",
      ]
    ) {
      assert.ok(runs.includes(expected), `ci.yml does not run ${expected}`);
    }
    assert.ok(
      runs.indexOf("./scripts/setup.sh") < runs.indexOf("npx deno task test"),
      "setup runs first",
    );
    assertTasksExist(wf);
    assertPinned(".github/workflows/ci.yml");
    assertNoPersistedCredentials(wf);
  },
});

/** The text of every step a job runs, by step name (or the action it uses). */
function steps(job: Job): Step[] {
  assert.ok(job.steps && job.steps.length > 0, `job ${job.name} has steps`);
  return job.steps;
}

Deno.test({
  name:
    "release.yml builds every target with Bun through the script test:binary runs, and tests the binary unpacked from the archive",
  ...requires("the workflow checks", YAML),
  async fn() {
    const wf = await load(".github/workflows/release.yml");
    assert.deepEqual(wf.on, { push: { tags: ["v*"] } });
    assert.deepEqual(wf.permissions, { contents: "read" });
    assert.equal(wf.jobs.gate.uses, "./.github/workflows/ci.yml");
    const build = wf.jobs.build;
    assert.equal(build.needs, "gate");
    const runs = steps(build).map((s) => s.run ?? "");
    // The one build: deno task release → scripts/build_release.ts, the script behind
    // build:bun, which test:binary (run by ci.yml, the gate) builds with.
    const buildSteps = runs.filter((r) =>
      /build_release|deno task (release|build|compile)/.test(r)
    );
    assert.deepEqual(buildSteps, [
      './node_modules/.bin/deno task release --tag "$GITHUB_REF_NAME" --repo "$GITHUB_REPOSITORY"',
    ]);
    assert.equal(
      denoConfig.tasks.release,
      "./node_modules/.bin/deno run --allow-all scripts/build_release.ts",
    );
    assert.equal(
      denoConfig.tasks["build:bun"],
      "./node_modules/.bin/deno run --allow-all scripts/build_release.ts --host",
    );
    assert.match(
      denoConfig.tasks["test:binary"],
      /^\.\/node_modules\/\.bin\/deno task build:bun && /,
    );
    const ci = await load(".github/workflows/ci.yml");
    assert.ok(ci.jobs.test.steps!.some((s) => s.run === "npx deno task test:binary"));
    // The e2e suites run against the binary unpacked from the archive users download.
    const unpack = runs.findIndex((r) =>
      r.includes("tar -xf dist/release/muxbridge-linux-x64.tar.xz -C dist/unpacked muxbridge")
    );
    const e2e = runs.findIndex((r) => r.includes("tests/e2e_*_test.ts"));
    assert.ok(unpack >= 0 && e2e > unpack, "unpack, then the end-to-end suites");
    assert.match(runs[e2e], /^MUXBRIDGE_TEST_BIN=dist\/unpacked\/muxbridge /);
    assert.match(runs[e2e], /scripts\/run_tests\.ts tests\/e2e_\*_test\.ts$/);
    assert.equal(steps(build)[e2e].env?.CI, "true", "a missing tool fails, never skips");
    assert.ok(runs.includes("cd dist/release && sha256sum -c SHA256SUMS"));
    // The npm packages come from the same binaries, in the same job; both sets are handed on.
    const pack = steps(build).find((s) => /deno task pack/.test(s.run ?? ""));
    assert.ok(pack, "the build job packs the npm packages");
    assert.match(pack.name!, /deno task pack/);
    // From the binaries the release step built (scripts/pack_npm.ts reads dist/bin/), with the
    // repository npm's provenance checks the packages against.
    assert.equal(pack.run, './node_modules/.bin/deno task pack --repo "$GITHUB_REPOSITORY"');
    assert.equal(
      denoConfig.tasks.pack,
      "./node_modules/.bin/deno run --allow-all scripts/pack_npm.ts",
    );
    assert.ok(steps(build).indexOf(pack) > runs.indexOf(buildSteps[0]), "pack after the build");
    // The npm end-to-end suite (tests/e2e_npm_test.ts) publishes to verdaccio.
    assert.match(runs.join("\n"), /npm install --prefix tools\/verdaccio --ignore-scripts/);
    const uploads = steps(build).filter((s) => s.uses?.startsWith("actions/upload-artifact@"));
    assert.deepEqual(uploads.map((s) => [s.with?.name, s.with?.path]), [
      ["release", "dist/release/"],
      ["npm", "dist/npm/*.tgz"],
    ]);
    assertTasksExist(wf);
  },
});

Deno.test("deno compile is gone: no task, workflow or build script path uses it", async () => {
  for (const [name, task] of Object.entries(denoConfig.tasks)) {
    assert.doesNotMatch(task, /deno compile|--tool deno/, `task ${name}`);
  }
  assert.ok(!("compile" in denoConfig.tasks) && !("release:bun" in denoConfig.tasks));
  for (const file of [".github/workflows/ci.yml", ".github/workflows/release.yml"]) {
    const text = await Deno.readTextFile(`${root}${file}`);
    assert.doesNotMatch(text, /\bdeno compile\b|denort/, file);
  }
});

Deno.test({
  name: "PENDING_TASKS lists only tasks that deno.json does not have yet",
  fn() {
    for (const task of PENDING_TASKS) {
      assert.ok(
        !(task in denoConfig.tasks),
        `deno task ${task} exists now: remove it from PENDING_TASKS in tests/workflows_test.ts`,
      );
    }
  },
});

Deno.test({
  name:
    "release.yml publishes from artifacts only: checksums, build provenance, the GitHub release, then npm with provenance",
  ...requires("the workflow checks", YAML),
  async fn() {
    const wf = await load(".github/workflows/release.yml");
    const publish = wf.jobs.publish;
    assert.equal(publish.needs, "build");
    const published = steps(publish).map((s) => s.run ?? "").join("\n");
    assert.match(published, /sha256sum -c SHA256SUMS/);
    assert.match(published, /gh release create "\$GITHUB_REF_NAME" dist\/release\/\*/);
    const attest = steps(publish).find((s) =>
      s.uses?.startsWith("actions/attest-build-provenance@")
    );
    assert.deepEqual(attest?.with, { "subject-checksums": "dist/release/SHA256SUMS" });

    const npm = wf.jobs.npm;
    assert.equal(npm.needs, "publish", "npm publishes only after the GitHub release exists");
    assert.deepEqual(
      steps(npm).filter((s) => s.uses).map((s) => s.uses!.split("@")[0]),
      ["actions/download-artifact", "actions/setup-node"],
    );
    assert.equal(steps(npm)[0].with?.name, "npm");
    const publishes = steps(npm).map((s) => s.run ?? "").join("\n").split("\n")
      .filter((l) => /npm publish/.test(l)).map((l) => l.trim());
    assert.deepEqual(publishes, [
      'npm publish "$tgz" --provenance --access public --ignore-scripts',
      'npm publish "$main" --provenance --access public --ignore-scripts',
    ]);
    assertTasksExist(wf);
  },
});

Deno.test({
  name:
    "release.yml: only the publishing jobs can write, they run no repository or package code, and nothing is clobbered",
  ...requires("the workflow checks", YAML),
  async fn() {
    const wf = await load(".github/workflows/release.yml");
    assertPinned(".github/workflows/release.yml");
    assertNoPersistedCredentials(wf);
    const allowed: Record<string, Record<string, string>> = {
      publish: { contents: "write", "id-token": "write", attestations: "write" },
      npm: { "id-token": "write" },
    };
    for (const [name, job] of Object.entries(wf.jobs)) {
      const writes = Object.entries(job.permissions ?? {}).filter(([, v]) => v === "write");
      assert.deepEqual(Object.fromEntries(writes), allowed[name] ?? {}, `job ${name}`);
      for (const step of job.steps ?? []) {
        const run = step.run ?? "";
        // Install scripts of npm packages never run in a release job.
        for (const m of run.matchAll(/npm (?:ci|install|i|publish)\b[^\n]*/g)) {
          assert.match(m[0], /--ignore-scripts/, `${name}: ${m[0]}`);
        }
        assert.doesNotMatch(run, /setup\.sh/, `${name}: setup.sh runs npm install scripts`);
        assert.doesNotMatch(
          run,
          /--clobber|gh release upload|gh release delete|npm unpublish/,
          name,
        );
      }
    }
    // The jobs holding a write token check out nothing and run no deno, node, bun or repository
    // script: only downloaded artifacts, sha256sum, the attest action, gh and npm publish.
    for (const name of Object.keys(allowed)) {
      for (const step of steps(wf.jobs[name])) {
        if (step.uses) {
          assert.match(
            step.uses,
            /^actions\/(download-artifact|attest-build-provenance|setup-node)@/,
            step.uses,
          );
          continue;
        }
        const run = (step.run ?? "").replace(/npm publish "\$\w+" [^\n]*/g, "")
          .replaceAll("dist/npm/", "");
        assert.doesNotMatch(run, /\b(npm|npx|deno|node|bun)\b|scripts\//, step.run);
      }
    }
  },
});
