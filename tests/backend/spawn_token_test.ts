/**
 * The spawn token (`lib/backend/spawn_token.ts`): its shape, the start command that carries
 * it, and `carriesToken`, which must find the token as a whole value only: a pane whose command
 * carries a longer hex run that begins with the token is another spawn's, never ours.
 */

import assert from "node:assert/strict";
import {
  carriesToken,
  newSpawnToken,
  SPAWN_TOKEN,
  tokenArgv,
  tokenMarker,
} from "../../lib/backend/spawn_token.ts";

const TOKEN = "0123456789abcdef0123456789abcdef";

Deno.test("newSpawnToken() gives 32 lower-case hex digits, a new value each time", () => {
  const tokens = Array.from({ length: 100 }, newSpawnToken);
  assert.ok(tokens.every((t) => SPAWN_TOKEN.test(t)), tokens.join(" "));
  assert.equal(new Set(tokens).size, tokens.length);
});

Deno.test("tokenMarker() and tokenArgv() put the token in the start command, and refuse a value that is not a token", () => {
  assert.equal(tokenMarker(TOKEN), `muxbridge-spawn=${TOKEN}`);
  assert.deepEqual(tokenArgv(["opencode", "attach"], TOKEN), [
    "/bin/sh",
    "-c",
    'exec "$@"',
    `muxbridge-spawn=${TOKEN}`,
    "opencode",
    "attach",
  ]);
  assert.deepEqual(tokenArgv(["opencode"], undefined), ["opencode"]);
  for (const bad of ["", TOKEN.toUpperCase(), `${TOKEN}0`, TOKEN.slice(1), `${TOKEN.slice(1)} `]) {
    assert.throws(() => tokenMarker(bad), RangeError, JSON.stringify(bad));
  }
});

Deno.test("carriesToken() finds the token as a whole value in a start command, wherever the multiplexer shows it", () => {
  const marker = `muxbridge-spawn=${TOKEN}`;
  for (
    const command of [
      `/bin/sh -c exec "$@" ${marker} opencode attach http://127.0.0.1:4096`, // zellij's shape
      `sh -c 'exec "$@"' '${marker}' opencode`, // quoted
      marker, // nothing after it
      `${marker}\tnext`,
    ]
  ) {
    assert.equal(carriesToken(command, TOKEN), true, command);
  }
});

Deno.test("carriesToken() refuses the token followed by more hex: that is another spawn's value", () => {
  const marker = `muxbridge-spawn=${TOKEN}`;
  for (const more of ["0", "a", "f", "9", "0123"]) {
    const command = `/bin/sh -c exec "$@" ${marker}${more} opencode attach`;
    assert.equal(carriesToken(command, TOKEN), false, command);
  }
  assert.equal(carriesToken(`muxbridge-spawn=${"f".repeat(32)} opencode`, TOKEN), false);
  assert.equal(carriesToken("opencode attach", TOKEN), false);
  assert.equal(carriesToken(undefined, TOKEN), false);
});
