/**
 * Reads the JUnit report `deno test --junit-path=<file>` writes: one entry per test (steps
 * included), with its file, its time and whether it failed. `scripts/run_tests.ts` uses it for
 * the slowest tests and the failures of each run, `scripts/stress_tests.ts` to count failures
 * over runs. Only the shape Deno 2.x writes is read (`<testcase name classname time>`, a
 * `<failure>` or `<skipped/>` inside).
 *
 * @module
 */

/** One test of a JUnit report. */
export interface TestCase {
  /** The test file, as Deno names it (`./tests/x_test.ts`). */
  file: string;
  /** The test's name; a step is `<test> > <step>`. */
  name: string;
  /** How long it took, in ms. */
  ms: number;
  /** Whether it failed. */
  failed: boolean;
  /** Whether it was ignored (`ignore: true`, or filtered out by `only`). */
  skipped: boolean;
  /** Whether it is a step of another test of the same file. */
  step: boolean;
}

const ENTITIES: Record<string, string> = {
  quot: '"',
  apos: "'",
  lt: "<",
  gt: ">",
  amp: "&",
};

/** XML text with its entities (`&quot;`, `&#39;`, `&#x27;`) replaced. */
function unescapeXml(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|[a-z]+);/g, (whole, ref: string) => {
    if (ref.startsWith("#x")) return String.fromCodePoint(parseInt(ref.slice(2), 16));
    if (ref.startsWith("#")) return String.fromCodePoint(Number(ref.slice(1)));
    return ENTITIES[ref] ?? whole;
  });
}

/** The attributes of one start tag (`name="…"`), unescaped. */
function attributes(tag: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of tag.matchAll(/([\w:-]+)="([^"]*)"/g)) out.set(m[1], unescapeXml(m[2]));
  return out;
}

/**
 * The tests of a JUnit report as Deno writes it.
 *
 * @param xml The report.
 * @returns Its tests, in report order; empty for text without test cases.
 *
 * @example
 * ```ts
 * import { parseJunit } from "./_junit.ts";
 * const [t] = parseJunit(
 *   '<testcase name="a &gt; b" classname="./x_test.ts" time="0.250"><failure message="m"/></testcase>',
 * );
 * console.log(t.name, t.ms, t.failed); // "a > b" 250 true
 * ```
 */
export function parseJunit(xml: string): TestCase[] {
  const cases: TestCase[] = [];
  const re = /<testcase\b([^>]*?)(\/>|>([\s\S]*?)<\/testcase>)/g;
  for (const m of xml.matchAll(re)) {
    const attrs = attributes(m[1]);
    const body = m[3] ?? "";
    cases.push({
      file: attrs.get("classname") ?? "",
      name: attrs.get("name") ?? "",
      ms: Math.round(Number(attrs.get("time") ?? "0") * 1000),
      failed: /<(failure|error)\b/.test(body),
      skipped: /<skipped\b/.test(body),
      step: false,
    });
  }
  // A step's name is its test's name, " > ", its own: mark those whose parent is in the file.
  const names = new Set(cases.map((c) => `${c.file}\0${c.name}`));
  for (const c of cases) {
    const cut = c.name.lastIndexOf(" > ");
    if (cut > 0 && names.has(`${c.file}\0${c.name.slice(0, cut)}`)) c.step = true;
  }
  return cases;
}

/**
 * Gives each test the test file it belongs to. Deno names a test by the module that called
 * `Deno.test`, so tests a shared helper registers (the backend contract suite of
 * `tests/backends/_contract.ts`) are named by the helper, not by the test file that ran it:
 * such a test goes to the one file of `files` whose text imports the helper (`share` 1), or,
 * when several do, is named `<helper> (via <file>, …)` with its time shared among them.
 *
 * @param cases Tests of one `deno test` process, files as Deno names them (`./x_test.ts`).
 * @param files The test files that process ran (`x_test.ts`).
 * @param source Reads a test file's text.
 * @returns Each test with its file (`x_test.ts`, without `./`), and the files its time goes to.
 *
 * @example
 * ```ts
 * import { attributeCases } from "./_junit.ts";
 * const [t] = attributeCases(
 *   [{ file: "./h.ts", name: "a", ms: 10, failed: false, skipped: false, step: false }],
 *   ["a_test.ts", "b_test.ts"],
 *   (f) => (f === "a_test.ts" ? 'import { suite } from "./h.ts";' : ""),
 * );
 * console.log(t.file, t.timeTo); // "a_test.ts" ["a_test.ts"]
 * ```
 */
export function attributeCases(
  cases: readonly TestCase[],
  files: readonly string[],
  source: (file: string) => string,
): Array<TestCase & { timeTo: string[] }> {
  const ran = new Set(files);
  const users = new Map<string, string[]>();
  const importers = (helper: string) => {
    let found = users.get(helper);
    if (!found) {
      const name = helper.slice(helper.lastIndexOf("/") + 1);
      found = files.filter((f) => {
        try {
          return new RegExp(`["'/]${name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}["']`).test(
            source(f),
          );
        } catch {
          return false;
        }
      });
      users.set(helper, found);
    }
    return found;
  };
  return cases.map((c) => {
    const file = c.file.replace(/^\.\//, "");
    if (ran.has(file)) return { ...c, file, timeTo: [file] };
    const via = importers(file);
    if (via.length === 1) return { ...c, file: via[0], timeTo: via };
    if (via.length === 0) return { ...c, file, timeTo: [] };
    return { ...c, file: `${file} (via ${via.join(", ")})`, timeTo: via };
  });
}
