/**
 * `scripts/setup.sh` installs npm packages without running their install scripts (issue 23,
 * item 7: it may run as root), and runs only the scripts it names, each one a package whose
 * postinstall the lock file declares.
 */

import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;
const script = Deno.readTextFileSync(`${ROOT}scripts/setup.sh`);
const commands = script.split("\n").filter((l) => !l.trimStart().startsWith("#"));

Deno.test("setup.sh runs npm install and npm ci with --ignore-scripts only", () => {
  const installs = commands.filter((l) => /\bnpm (?:install|ci|i)\b/.test(l));
  assert.ok(installs.length > 0);
  for (const line of installs) assert.match(line, /--ignore-scripts\b(?!=false)/, line);
});

Deno.test("setup.sh runs by name only the install scripts of packages the lock file says have one", () => {
  const lock = JSON.parse(Deno.readTextFileSync(`${ROOT}package-lock.json`)) as {
    packages: Record<string, { hasInstallScript?: boolean }>;
  };
  // A rebuild in another prefix (OpenCode 2.x's) is checked against that prefix's lock, not here.
  const rebuilds = commands.filter((l) => /\bnpm rebuild\b/.test(l) && !/--prefix\b/.test(l));
  for (const line of rebuilds) {
    const named = line.replace(/^.*\bnpm rebuild\b/, "").split(/\s+/).filter((w) =>
      w !== "" && !w.startsWith("-")
    );
    assert.ok(named.length > 0, `${line}: a rebuild names its packages`);
    for (const name of named) {
      assert.equal(lock.packages[`node_modules/${name}`]?.hasInstallScript, true, name);
    }
  }
});
