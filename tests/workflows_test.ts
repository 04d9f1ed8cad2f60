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
  },
});

Deno.test({
  name:
    "release.yml runs on v* tags: the CI gate, deno compile for five targets, checksums, upload",
  ...requires("the workflow checks", YAML),
  async fn() {
    const wf = await load(".github/workflows/release.yml");
    assert.deepEqual(wf.on, { push: { tags: ["v*"] } });
    assert.equal(wf.jobs.gate.uses, "./.github/workflows/ci.yml");
    const job = wf.jobs.release;
    assert.equal(job.needs, "gate");
    assert.deepEqual(job.permissions, { contents: "write" });
    const text = job.steps!.map((s) => s.run ?? "").join("\n");
    assert.match(text, /npx deno task release --tag "\$GITHUB_REF_NAME"/);
    assert.match(text, /MUXBRIDGE_TEST_BIN=dist\/release\/muxbridge-linux-x64/);
    assert.match(text, /sha256sum -c SHA256SUMS/);
    assert.match(text, /gh release (create|upload) "\$GITHUB_REF_NAME" dist\/release\/\*/);
    assert.match(denoConfig.tasks.release, /build_release\.ts --tool deno$/);
    assertTasksExist(wf);
  },
});
