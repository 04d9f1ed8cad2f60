/**
 * Tests that need something the machine may lack (a program on PATH, an installed package, a
 * platform). Every such test spreads {@linkcode requires} into its definition:
 *
 * - everything present: the test runs as written;
 * - locally, something missing: the test is skipped *visibly*: one line on stderr now, and a
 *   line in the skip log (`$MUXBRIDGE_SKIP_LOG`) that `scripts/run_tests.ts` lists when the run ends;
 * - in CI (`CI=true`), something missing: a test in its place fails, naming what is missing and
 *   how to install it. CI never passes by skipping.
 *
 * Programs are found on `PATH`, never at a fixed path.
 *
 * @module
 */

import { appendFileSync, statSync } from "node:fs";

/** One thing a test needs. */
export interface Requirement {
  /** What it is ("kitty", "PyYAML for python3"). */
  name: string;
  /** Whether it is here. */
  found: boolean;
  /** How to get it. */
  hint: string;
}

/**
 * A program's path on `PATH`, or null.
 *
 * @param name The program.
 * @returns Its first executable match on PATH.
 */
export function which(name: string): string | null {
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir === "") continue;
    const path = `${dir}/${name}`;
    try {
      const st = statSync(path);
      if (st.isFile() && (st.mode & 0o111) !== 0) return path;
    } catch { /* not here */ }
  }
  return null;
}

/**
 * A program that must be on PATH.
 *
 * @param name The program.
 * @param hint How to install it. @default "run scripts/setup.sh"
 * @returns The requirement.
 */
export function tool(name: string, hint = "run scripts/setup.sh"): Requirement {
  return { name, found: which(name) !== null, hint };
}

/**
 * Any other requirement, already checked.
 *
 * @param name What it is.
 * @param found Whether it is here.
 * @param hint How to get it.
 * @returns The requirement.
 */
export function requirement(name: string, found: boolean, hint: string): Requirement {
  return { name, found, hint };
}

/** Whether this run is CI, where a missing requirement is a failure. */
export const IN_CI: boolean = Deno.env.get("CI") === "true";

/**
 * What a test that needs `requirements` must spread into its definition (see the module
 * comment): `{ ignore: false }` when everything is here; else `{ ignore: true }` with the skip
 * recorded (locally), or with a failing test registered in its place (CI).
 *
 * @param label The test's name, or the name of the group of tests that share the need.
 * @param requirements What the test needs.
 * @returns The `ignore` option.
 *
 * @example
 * ```ts ignore
 * Deno.test({ name: "fish as default-shell", ...requires("fish as default-shell", [tool("fish")]), fn });
 * ```
 */
export function requires(
  label: string,
  requirements: readonly Requirement[],
): { ignore: boolean } {
  const missing = requirements.filter((r) => !r.found);
  if (missing.length === 0) return { ignore: false };
  const what = missing.map((r) => `${r.name} (${r.hint})`).join(", ");
  const key = `${label}\0${what}`;
  if (!reported.has(key)) {
    reported.add(key);
    if (IN_CI) {
      Deno.test(`CI requirement: ${label} needs ${missing.map((r) => r.name).join(", ")}`, () => {
        throw new Error(`CI=true and "${label}" needs what is missing here: ${what}`);
      });
    }
    record(label, what);
  }
  return { ignore: true };
}

const reported = new Set<string>();

/**
 * Says a test did not run: on stderr now, and in the skip log for the end of the run (in CI the
 * test registered in its place fails as well).
 */
function record(test: string, why: string): void {
  console.error(`${IN_CI ? "missing in CI" : "skipped"}: ${test}: needs ${why}`);
  const log = Deno.env.get("MUXBRIDGE_SKIP_LOG");
  if (log) appendFileSync(log, `${JSON.stringify({ test, why })}\n`);
}
