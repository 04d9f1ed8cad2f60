#!/bin/sh
# Sets up a fresh Debian/Ubuntu machine for muxbridge development: the multiplexers the tests
# drive for real (tmux; kitty under Xvfb; fish as a hostile default shell) and the npm packages
# (Deno itself, zod, semver, and the real OpenCode server for the end-to-end tests).
# Idempotent; skips apt when everything is already there.
set -eu
cd "$(dirname "$0")/.."

need=""
for pair in tmux:tmux kitty:kitty Xvfb:xvfb xauth:xauth fish:fish; do
  bin=${pair%%:*}; pkg=${pair#*:}
  command -v "$bin" >/dev/null 2>&1 || need="$need $pkg"
done
if [ -n "$need" ]; then
  if [ "$(id -u)" = 0 ]; then SUDO=""; else SUDO="sudo"; fi
  echo "setup: installing$need with apt-get"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need >/dev/null
fi

echo "setup: installing npm packages (deno, zod, semver, opencode-ai)"
npm ci --no-audit --no-fund --loglevel=error
./node_modules/.bin/deno --version | head -1
