#!/bin/sh
# Sets up a fresh Debian/Ubuntu machine for muxbridge development: everything the test suite
# uses, so that no test has to skip (in CI, CI=true, a test whose tool is missing fails):
# the multiplexers the tests drive for real (tmux; kitty under Xvfb, with xauth; GNU screen),
# fish as a hostile default shell, bash and dash for the launch-line tests, setsid (util-linux)
# for process-group tests, shellcheck for the installer and curl, wget, openssl (its tests' HTTPS
# servers), xz and shasum for what it runs, PyYAML for the workflow checks, and the
# npm packages (Deno itself, Bun, zod, semver, and the real OpenCode server for the end-to-end
# tests). Idempotent; skips apt when everything is already there.
set -eu
cd "$(dirname "$0")/.."

need=""
for pair in tmux:tmux kitty:kitty Xvfb:xvfb xvfb-run:xvfb xauth:xauth fish:fish screen:screen \
  shellcheck:shellcheck setsid:util-linux bash:bash dash:dash python3:python3 \
  curl:curl wget:wget openssl:openssl xz:xz-utils shasum:perl; do
  bin=${pair%%:*}; pkg=${pair#*:}
  command -v "$bin" >/dev/null 2>&1 || need="$need $pkg"
done
python3 -c 'import yaml' >/dev/null 2>&1 || need="$need python3-yaml"
if [ -n "$need" ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "setup: installing$need with apt-get"
  $SUDO apt-get update -qq
  # shellcheck disable=SC2086 # one word per package
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null
fi

echo "setup: installing npm packages (deno, bun, zod, semver, opencode-ai)"
# `npm install`, not `npm ci`: the npm registry our machines reach lacks some of opencode-ai's
# optional per-platform packages (opencode-darwin-arm64@1.18.33 answers 404), so the lock file
# cannot list them and `npm ci` refuses it as out of sync; `npm install` skips optional packages
# it cannot get. The versions are pinned in package.json and package-lock.json either way.
#
# No package's install scripts run (this script may run as root): --ignore-scripts. Three
# packages need theirs, and only those are run, by name: deno, bun and opencode-ai ship a
# placeholder bin that their postinstall replaces with the platform binary their own
# optionalDependencies brought (@deno/*, @oven/bun-*, opencode-*); we run those binaries anyway,
# so their scripts ask for no more trust. Skipped: msgpackr-extract's native build (a dependency
# of @opencode-ai/plugin's types; msgpackr falls back to JavaScript and nothing here runs it).
npm install --ignore-scripts --no-audit --no-fund --loglevel=error
npm rebuild deno bun opencode-ai --ignore-scripts=false --loglevel=error
./node_modules/.bin/deno --version | head -1

# OpenCode 2.x for its end-to-end tests, in its own prefix (its `opencode` bin clashes with
# opencode-ai's). No install scripts: the tests run the platform package's binary, which is all
# @opencode/cli's postinstall would link into place (tests/helpers/opencode2_home.ts).
echo "setup: installing OpenCode 2.x (@opencode/cli) into tools/opencode2"
npm install --prefix tools/opencode2 --ignore-scripts --no-audit --no-fund --loglevel=error

# A real npm registry for the npm packages' end-to-end test (tests/e2e_npm_test.ts), in its own
# prefix: verdaccio brings ~300 packages the project itself does not need. No install scripts.
echo "setup: installing verdaccio into tools/verdaccio"
npm install --prefix tools/verdaccio --ignore-scripts --no-audit --no-fund --loglevel=error
