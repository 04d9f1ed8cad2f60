/**
 * `scripts/run_tests.ts`: what its arguments mean, how it groups files into `deno test`
 * processes that run side by side (the files that must run alone declared, never guessed), how
 * it reads Deno's JUnit report, and a real run of two groups at once, one of them failing.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { attributeCases, parseJunit } from "../scripts/_junit.ts";
import {
  ALONE,
  cpuTimes,
  expectedMs,
  FILE_OVERHEAD_MS,
  GROUP_MS,
  parseRunArgs,
  planGroups,
  seconds,
  testFiles,
  UNKNOWN_E2E_MS,
  UNKNOWN_FILE_MS,
} from "../scripts/_test_plan.ts";
import type { RunSummary } from "../scripts/run_tests.ts";
import { runTag } from "./helpers/run_tag.ts";

const REPO = new URL("../", import.meta.url).pathname;
const FIXTURES = "tests/testdata/run_tests";

Deno.test("parseJunit() reads Deno's report: names unescaped, times in ms, failures, ignored tests and steps", () => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="deno test" tests="4" failures="1" errors="0" time="0.060">
    <testsuite name="./a_test.ts" tests="4" disabled="1" errors="0" failures="1">
        <testcase name="says &quot;hi&quot; &amp; &lt;bye&gt;" classname="./a_test.ts" time="1.250" line="1" col="6">
        </testcase>
        <testcase name="fails" classname="./a_test.ts" time="0.003" line="2" col="6">
            <failure message="Uncaught Error: boom">Error: boom &lt;testcase name="fake"&gt;</failure>
        </testcase>
        <testcase name="ignored" classname="./a_test.ts" time="0.000" line="3" col="6">
            <skipped/>
        </testcase>
        <testcase name="steps" classname="./a_test.ts" time="0.002" line="4" col="6">
        </testcase>
        <testcase name="steps &gt; s1" classname="./a_test.ts" time="0.000" line="4" col="43">
        </testcase>
        <testcase name="x &gt; y" classname="./a_test.ts" time="0.000" line="5" col="6">
        </testcase>
    </testsuite>
</testsuites>`;
  const cases = parseJunit(xml);
  assert.deepEqual(cases.map((c) => [c.name, c.ms, c.failed, c.skipped, c.step]), [
    ['says "hi" & <bye>', 1250, false, false, false],
    ["fails", 3, true, false, false],
    ["ignored", 0, false, true, false],
    ["steps", 2, false, false, false],
    ["steps > s1", 0, false, false, true],
    ["x > y", 0, false, false, false], // no test "x": a name with " > " in it, not a step
  ]);
  assert.ok(cases.every((c) => c.file === "./a_test.ts"));
  assert.deepEqual(parseJunit("not a report"), []);
});

Deno.test("attributeCases() gives a test a shared helper registered to the test file that imports the helper, or names them all", () => {
  const t = (file: string, name: string, ms = 100) => ({
    file,
    name,
    ms,
    failed: false,
    skipped: false,
    step: false,
  });
  const sources: Record<string, string> = {
    "tests/a_contract_test.ts": 'import { backendContract } from "./_contract.ts";',
    "tests/b_contract_test.ts": "import { backendContract } from './_contract.ts';",
    "tests/c_test.ts": 'import { other } from "./_other_contract.ts";',
  };
  const cases = [
    t("./tests/c_test.ts", "own"),
    t("./tests/_contract.ts", "a contract: probe", 300),
    t("./tests/_lonely.ts", "nobody imports it"),
  ];
  const one = attributeCases(
    cases,
    ["tests/a_contract_test.ts", "tests/c_test.ts"],
    (f) => sources[f],
  );
  assert.deepEqual(one.map((c) => [c.file, c.timeTo]), [
    ["tests/c_test.ts", ["tests/c_test.ts"]],
    ["tests/a_contract_test.ts", ["tests/a_contract_test.ts"]],
    ["tests/_lonely.ts", []],
  ]);
  const two = attributeCases(
    cases.slice(1, 2),
    ["tests/a_contract_test.ts", "tests/b_contract_test.ts", "tests/c_test.ts"],
    (f) => sources[f],
  );
  assert.deepEqual(two.map((c) => [c.file, c.timeTo]), [[
    "tests/_contract.ts (via tests/a_contract_test.ts, tests/b_contract_test.ts)",
    ["tests/a_contract_test.ts", "tests/b_contract_test.ts"],
  ]]);
});

Deno.test("parseRunArgs() takes --jobs and --summary-json, paths that exist, and hands the rest to deno test", () => {
  assert.deepEqual(
    parseRunArgs(["--jobs", "2", "--filter", "tmux", "tests/sys/", "--fail-fast", "--jobs=4"]),
    { paths: ["tests/sys/"], denoArgs: ["--filter", "tmux", "--fail-fast"], jobs: 4 },
  );
  assert.deepEqual(parseRunArgs(["--summary-json=/tmp/s.json", "--filter=x"]), {
    paths: [],
    denoArgs: ["--filter=x"],
    summaryJson: "/tmp/s.json",
  });
  for (const bad of [["--jobs", "0"], ["--jobs", "two"], ["--jobs"], ["--summary-json"]]) {
    assert.throws(() => parseRunArgs(bad), RangeError, bad.join(" "));
  }
  // A typo must not run the whole suite.
  assert.throws(
    () => parseRunArgs(["tests/no_such_test.ts"]),
    /Cannot find "tests\/no_such_test.ts"/,
  );
});

Deno.test("testFiles() finds the test files under folders as deno test does, and takes a file named whatever its name", () => {
  const root = Deno.makeTempDirSync({ prefix: "muxbridge-test-files-" });
  try {
    for (const f of ["a_test.ts", "b.test.ts", "test.ts", "c.ts", "d_test.md", "sub/e_test.ts"]) {
      Deno.mkdirSync(join(root, f, ".."), { recursive: true });
      Deno.writeTextFileSync(join(root, f), "");
    }
    for (const skipped of ["node_modules", "dist", ".tmp", ".git"]) {
      Deno.mkdirSync(join(root, skipped));
      Deno.writeTextFileSync(join(root, skipped, "x_test.ts"), "");
    }
    assert.deepEqual(testFiles(root, []), ["a_test.ts", "b.test.ts", "sub/e_test.ts", "test.ts"]);
    assert.deepEqual(testFiles(root, [join(root, "sub"), join(root, "c.ts"), join(root, "c.ts")]), [
      "c.ts",
      "sub/e_test.ts",
    ]);
  } finally {
    Deno.removeSync(root, { recursive: true });
  }
});

Deno.test("planGroups() starts the longest files first, packs short ones into groups, and runs the declared files alone at the end", () => {
  const times = { "tests/long_test.ts": 90_000, "tests/mid_test.ts": 25_000 };
  const files = [
    "tests/a_test.ts",
    "tests/b_test.ts",
    "tests/e2e_new_test.ts",
    "tests/long_test.ts",
    "tests/mid_test.ts",
    "tests/measures_test.ts",
  ];
  const { parallel, alone } = planGroups(files, times, { "tests/measures_test.ts": "measures" });
  assert.deepEqual(parallel.map((g) => g.files), [
    ["tests/long_test.ts"],
    ["tests/e2e_new_test.ts"], // never timed, end to end: taken for a long file
    ["tests/mid_test.ts"],
    ["tests/a_test.ts", "tests/b_test.ts"],
  ]);
  assert.deepEqual(alone, [{
    files: ["tests/measures_test.ts"],
    ms: UNKNOWN_FILE_MS,
    alone: "measures",
  }]);
  assert.equal(expectedMs("tests/long_test.ts", times), 90_000 + FILE_OVERHEAD_MS);
  assert.equal(expectedMs("tests/e2e_new_test.ts", {}), UNKNOWN_E2E_MS);
  // Short files fill groups of about GROUP_MS, never one process per tiny file.
  const many = Array.from({ length: 40 }, (_, i) => `tests/u${i}_test.ts`);
  const packed = planGroups(many, Object.fromEntries(many.map((f) => [f, 1000]))).parallel;
  assert.ok(packed.every((g) => g.ms <= GROUP_MS), JSON.stringify(packed.map((g) => g.ms)));
  assert.equal(packed.length, Math.ceil(40 / Math.floor(GROUP_MS / (1000 + FILE_OVERHEAD_MS))));
  assert.deepEqual(packed.flatMap((g) => g.files).sort(), [...many].sort());
});

Deno.test("seconds() rounds once: tenths under a minute, whole minutes and seconds above", () => {
  assert.equal(seconds(1234), "1.2 s");
  assert.equal(seconds(59_949), "59.9 s");
  assert.equal(seconds(59_950), "1 min 0 s");
  assert.equal(seconds(539_960), "9 min 0 s");
  assert.equal(seconds(562_400), "9 min 22 s");
});

Deno.test("cpuTimes() reads busy and idle seconds from /proc/stat's cpu line", () => {
  const stat = "cpu  1000 20 300 5000 100 7 3 10 0 0\ncpu0 500 10 150 2500 50 3 1 5 0 0\n";
  assert.deepEqual(cpuTimes(stat), { busy: 13.4, idle: 51 });
  assert.equal(cpuTimes("intr 1 2 3\n"), undefined);
});

Deno.test("ALONE names files that exist, each with its reason", () => {
  for (const [file, why] of Object.entries(ALONE)) {
    assert.ok(Deno.statSync(join(REPO, file)).isFile, file);
    assert.ok(why.length > 20, `${file}: say why it cannot run beside others`);
  }
});

Deno.test("scripts/run_tests.ts runs two groups side by side and ends with the failure, the slowest tests, the wall time and the load", async () => {
  const dir = Deno.makeTempDirSync({ prefix: "muxbridge-run-tests-" });
  try {
    const times = join(dir, "times.json");
    // Timed as long files: two groups, so both run at once in processes of their own.
    Deno.writeTextFileSync(
      times,
      JSON.stringify({ [`${FIXTURES}/passing.ts`]: 30_000, [`${FIXTURES}/failing.ts`]: 30_000 }),
    );
    const summaryPath = join(dir, "summary.json");
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-all",
        "scripts/run_tests.ts",
        "--jobs",
        "2",
        "--summary-json",
        summaryPath,
        `${FIXTURES}/passing.ts`,
        `${FIXTURES}/failing.ts`,
      ],
      cwd: REPO,
      // A run of its own: not inside this one (no MUXBRIDGE_SKIP_LOG), with its own tag.
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: Deno.env.get("HOME") ?? dir,
        ...(Deno.env.get("DENO_DIR") ? { DENO_DIR: Deno.env.get("DENO_DIR")! } : {}),
        NO_COLOR: "1",
        MUXBRIDGE_TEST_TIMES: times,
        ...runTag(),
      },
      clearEnv: true,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).output();
    const stdout = new TextDecoder().decode(out.stdout);
    assert.equal(out.code, 1, stdout);
    assert.match(stdout, /2 test file\(s\) in 2 group\(s\), 2 at a time/);
    assert.match(stdout, /type-checked 2 file\(s\)/);
    assert.match(
      stdout,
      /── \[\d\/2\] tests\/testdata\/run_tests\/failing\.ts: FAILED \(exit 1, 1 failed\)/,
    );
    assert.match(stdout, /── \[\d\/2\] tests\/testdata\/run_tests\/passing\.ts: ok/);
    assert.match(stdout, /failing on purpose/, "a failing group's own output is printed");
    assert.match(
      stdout,
      /failed: 1\n {2}- tests\/testdata\/run_tests\/failing\.ts: fails on purpose/,
    );
    assert.match(stdout, /slowest tests:\n(.*\n){3}wall time /);
    assert.match(stdout, /process\(es\) at a time; load average \(1 min\) \d+\.\d\d before/);
    assert.match(stdout, /\nmachine CPU busy \d+ s of \d+ core\(s\) × [\d.]+ s \(\d+ %/);
    const summary = JSON.parse(Deno.readTextFileSync(summaryPath)) as RunSummary;
    assert.equal(summary.code, 1);
    assert.equal(summary.jobs, 2);
    assert.equal(summary.files, 2);
    assert.deepEqual(summary.failed, [{
      file: `${FIXTURES}/failing.ts`,
      name: "fails on purpose",
    }]);
    assert.deepEqual([summary.skipped, summary.leaked, summary.interrupted], [[], [], false]);
    // The times file now holds this run's times (the sum of each file's tests).
    const saved = JSON.parse(Deno.readTextFileSync(times));
    assert.ok(saved[`${FIXTURES}/passing.ts`] < 30_000, JSON.stringify(saved));
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});
