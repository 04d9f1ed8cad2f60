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

/** Every `deno task NAME` a workflow runs must exist in deno.json. */
function assertTasksExist(wf: Workflow): void {
  const tasks = Object.keys(denoConfig.tasks);
  for (const job of Object.values(wf.jobs)) {
    for (const step of job.steps ?? []) {
      for (const m of (step.run ?? "").matchAll(/deno task ([\w:-]+)/g)) {
        assert.ok(tasks.includes(m[1]), `"${step.name}" runs unknown task ${m[1]}`);
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

Deno.test({
  name:
    "release.yml runs on v* tags: the CI gate, deno compile for five targets, checksums, attestation, release",
  ...requires("the workflow checks", YAML),
  async fn() {
    const wf = await load(".github/workflows/release.yml");
    assert.deepEqual(wf.on, { push: { tags: ["v*"] } });
    assert.deepEqual(wf.permissions, { contents: "read" });
    assert.equal(wf.jobs.gate.uses, "./.github/workflows/ci.yml");
    const build = wf.jobs.build;
    assert.equal(build.needs, "gate");
    const text = build.steps!.map((s) => s.run ?? "").join("\n");
    assert.match(text, /deno task release --tag "\$GITHUB_REF_NAME"/);
    assert.match(text, /MUXBRIDGE_TEST_BIN=dist\/release\/muxbridge-linux-x64/);
    assert.match(text, /sha256sum -c SHA256SUMS/);
    assert.match(denoConfig.tasks.release, /build_release\.ts --tool deno$/);
    const publish = wf.jobs.publish;
    assert.equal(publish.needs, "build");
    const published = publish.steps!.map((s) => s.run ?? "").join("\n");
    assert.match(published, /gh release create "\$GITHUB_REF_NAME" dist\/release\/\*/);
    assert.ok(
      publish.steps!.some((s) => s.uses?.startsWith("actions/attest@")),
      "the publish job attests the build provenance",
    );
    assertTasksExist(wf);
  },
});

Deno.test({
  name:
    "release.yml: only the publish job can write, it runs no package code, and nothing is clobbered",
  ...requires("the workflow checks", YAML),
  async fn() {
    const wf = await load(".github/workflows/release.yml");
    assertPinned(".github/workflows/release.yml");
    assertNoPersistedCredentials(wf);
    for (const [name, job] of Object.entries(wf.jobs)) {
      const writes = Object.entries(job.permissions ?? {}).filter(([, v]) => v === "write");
      if (name === "publish") {
        assert.deepEqual(Object.fromEntries(writes), {
          contents: "write",
          "id-token": "write",
          attestations: "write",
        });
      } else {
        assert.deepEqual(writes, [], `job ${name} must not hold a write token`);
      }
      for (const step of job.steps ?? []) {
        const run = step.run ?? "";
        // Install scripts of npm packages never run in a release job.
        for (const m of run.matchAll(/npm (?:ci|install|i)\b[^\n]*/g)) {
          assert.match(m[0], /--ignore-scripts/, `${name}: ${m[0]}`);
        }
        assert.doesNotMatch(run, /setup\.sh/, `${name}: setup.sh runs npm install scripts`);
        assert.doesNotMatch(run, /--clobber|gh release upload|gh release delete/, name);
      }
    }
    // The job holding the write token checks out nothing and runs no npm, deno or repository
    // script: only the downloaded artifact, sha256sum, the attest action and gh.
    for (const step of wf.jobs.publish.steps!) {
      if (step.uses) {
        assert.match(step.uses, /^actions\/(download-artifact|attest)@/, step.uses);
        continue;
      }
      assert.doesNotMatch(step.run ?? "", /\b(npm|npx|deno|node|bun)\b|scripts\//, step.run);
    }
  },
});
