/**
 * What each backend reads to tell its multiplexer instance and a pane's program apart
 * (`backends/<name>/_identity.ts`), on what the programs print or leave on disk: zellij's session
 * list, the socket files of WezTerm, herdr, cmux and kitty, WezTerm's pane programs, and the
 * spawn token in a start command.
 */

import assert from "node:assert/strict";
import { appInstance } from "../../backends/cmux/_identity.ts";
import { serverInstance } from "../../backends/herdr/_identity.ts";
import { kittyInstance } from "../../backends/kitty/_windows.ts";
import type { KittyCommand } from "../../backends/kitty/_command.ts";
import { paneProgram, socketInstance } from "../../backends/wezterm/_identity.ts";
import type { WeztermPanes } from "../../backends/wezterm/_panes.ts";
import { parseAge, sessionAge, sessionInstance } from "../../backends/zellij/_identity.ts";
import type { BackendDeps } from "../../lib/backend/backend.ts";
import { tokenIn } from "../../lib/backend/spawn_token.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { validatePaneId } from "../../lib/sys/validate.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { createFakeRunner } from "../fakes/fake_runner.ts";
import { type FullConfig, resolveConfig } from "../helpers/config.ts";

const TOKEN = "0123456789abcdef0123456789abcdef";

/** A directory with a socket file in it (a listener, closed by the returned function). */
async function socketAt(name: string): Promise<{ path: string; restart(): void; close(): void }> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-identity-" });
  const path = `${dir}/${name}`;
  let listener = Deno.listen({ transport: "unix", path });
  return {
    path,
    restart() {
      listener.close();
      listener = Deno.listen({ transport: "unix", path });
    },
    close() {
      listener.close();
      Deno.removeSync(dir, { recursive: true });
    },
  };
}

Deno.test("tokenIn() finds the spawn token marker as a whole word, and says when there is none", () => {
  assert.equal(tokenIn(`/bin/sh -c exec "$@" muxbridge-spawn=${TOKEN} opencode attach`), TOKEN);
  assert.equal(tokenIn("sleep 424242"), null);
  assert.equal(tokenIn(`x-muxbridge-spawn=${TOKEN}`), null);
  assert.equal(tokenIn(`muxbridge-spawn=${TOKEN}f`), null);
  assert.equal(tokenIn(undefined), undefined);
});

Deno.test("zellij parseAge() reads humantime's format_duration in whole seconds", () => {
  assert.equal(parseAge("0s"), 0);
  assert.equal(parseAge("2h 37m"), 9420);
  assert.equal(parseAge("1day 1h 1m 1s"), 90061);
  assert.equal(parseAge("1year 2months 3days"), 31_557_600 + 2 * 2_630_016 + 3 * 86400);
  assert.equal(parseAge("5s 32ms"), 5);
  assert.equal(parseAge("soon"), null);
  assert.equal(parseAge("3 hours"), null);
});

Deno.test("zellij sessionAge() finds a running session in list-sessions --no-formatting output", () => {
  const out = [
    "work [Created 1h 2m 3s ago] (current)",
    "old [Created 3days ago] (EXITED - attach to resurrect)",
    "other [Created 5s ago] ",
  ].join("\n");
  assert.equal(sessionAge(out, "work"), 3723);
  assert.equal(sessionAge(out, "other"), 5);
  assert.equal(sessionAge(out, "old"), null, "an exited session runs no server");
  assert.equal(sessionAge(out, "nope"), null);
});

Deno.test("zellij sessionInstance() turns the age into the span of seconds the server started in", async () => {
  const clock = createFakeClock(1_000_000_500);
  const runner = createFakeRunner().on(
    ["zellij", "list-sessions", "--no-formatting"],
    { stdout: "work [Created 1m 40s ago] \n" },
  );
  const deps = {
    run: runner.run,
    env: () => undefined,
    clock,
    config: resolveConfig({ env: () => undefined, flags: { backend: "zellij" } }),
    identity: { backend: null, layers: [], harness: { name: null } },
    log: silentLogger,
  } as BackendDeps<FullConfig>;
  assert.deepEqual(await sessionInstance(deps, "work"), {
    address: "work",
    startedAt: [1_000_000 - 100 - 1, 1_000_001 - 100],
  });
  assert.equal(await sessionInstance(deps, "gone"), null);
  assert.equal(await sessionInstance(deps, undefined), null);
});

Deno.test("socket files name WezTerm, herdr, cmux and kitty: the same while the server runs, another after it restarts", async () => {
  const sock = await socketAt("gui-sock-4242");
  try {
    const wezterm = socketInstance(sock.path);
    assert.deepEqual({ ...wezterm, stamp: undefined }, {
      address: sock.path,
      pid: 4242,
      stamp: undefined,
    });
    assert.deepEqual(socketInstance(sock.path), wezterm);
    const layer = { backend: "herdr", paneId: "w1:p1", socket: sock.path };
    const deps = (backend: string, config: Record<string, unknown>) =>
      ({
        env: () => undefined,
        config: resolveConfig({ env: () => undefined, flags: { backend, ...config } }),
        identity: { backend, layers: [{ ...layer, backend }], harness: { name: null } },
      }) as unknown as BackendDeps<FullConfig>;
    const herdr = serverInstance(deps("herdr", {}), layer);
    const cmux = appInstance(deps("cmux", {}));
    const kitty = kittyInstance({ address: () => `unix:${sock.path}` } as KittyCommand, undefined);
    for (const instance of [herdr, cmux, kitty]) assert.equal(instance?.stamp, wezterm?.stamp);
    sock.restart();
    assert.notEqual(socketInstance(sock.path)?.stamp, wezterm?.stamp);
    assert.notEqual(serverInstance(deps("herdr", {}), layer)?.stamp, herdr?.stamp);
  } finally {
    sock.close();
  }
  // Nothing there: no server to name.
  assert.equal(socketInstance("/nonexistent/gui-sock-1"), null);
  assert.equal(socketInstance(undefined), null);
});

Deno.test("kitty on an abstract socket is named by KITTY_PID only from inside that very kitty", () => {
  const kitty = { address: () => "unix:@mykitty" } as KittyCommand;
  const inside = { backend: "kitty", paneId: "1", socket: "unix:@mykitty", pid: 77 };
  assert.deepEqual(kittyInstance(kitty, inside), { address: "unix:@mykitty", pid: 77 });
  assert.equal(kittyInstance(kitty, { ...inside, socket: "unix:@another" }), null);
  assert.equal(kittyInstance(kitty, undefined), null);
});

Deno.test("wezterm paneProgram() is the one program claiming the pane, with its token or null", () => {
  const panes = (programs: Array<{ paneId: string; pid: number; token?: string }>) =>
    ({ programs: () => programs }) as unknown as WeztermPanes;
  const id = validatePaneId("3");
  assert.deepEqual(paneProgram(panes([{ paneId: "3", pid: 40, token: TOKEN }]), id), {
    pid: 40,
    token: TOKEN,
  });
  assert.deepEqual(paneProgram(panes([{ paneId: "3", pid: 40 }]), id), { pid: 40, token: null });
  assert.deepEqual(paneProgram(panes([]), id), {});
  assert.deepEqual(
    paneProgram(panes([{ paneId: "3", pid: 40 }, { paneId: "3", pid: 41 }]), id),
    {},
    "two programs claiming one pane prove nothing",
  );
});
