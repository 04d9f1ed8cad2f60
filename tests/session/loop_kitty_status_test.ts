/**
 * Live status on the real kitty 0.26.5 under Xvfb: the session loop (on a simulated clock, so
 * the one-a-second limit is stepped, never waited for) drives the real kitty backend, and each
 * window's title follows its child — `[busy]`, `[retry 2]`, `[idle]` — read back from kitty. A
 * window the user closed is reported `gone` once when its next title fails.
 */

import assert from "node:assert/strict";
import { createKittyBackend } from "../../backends/kitty/backend.ts";
import type { OutMessage } from "../../lib/bridge/protocol.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { SessionLoop } from "../../lib/session/loop.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { type PaneId, validateSessionId as sid } from "../../lib/sys/validate.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { createMemoryStore, fakeProcesses } from "../fakes/memory_store.ts";
import { detectAll, resolveConfig } from "../helpers/config.ts";
import { KITTY_TOOLS, startKittyServer } from "../helpers/kitty_server.ts";
import { requires } from "../helpers/requires.ts";
import { writeStandIn } from "../helpers/stand_in.ts";
import { until } from "../helpers/until.ts";

Deno.test({
  name:
    "kitty live: a child's window title follows busy, retry and idle; a closed window is gone once",
  ...requires("kitty live tests", KITTY_TOOLS),
  async fn() {
    const server = await startKittyServer();
    const clock = createFakeClock();
    const out: OutMessage[] = [];
    let loop: SessionLoop | null = null;
    try {
      const env = fakeEnv(server.env as Record<string, string>);
      const flags = {
        backend: "kitty",
        command_timeout_ms: 15_000,
        kitty: { listen_on: server.address, window_id: Number(server.anchorWindow) },
        // A stand-in for `opencode attach` that stays until it is closed.
        opencode_bin: await writeStandIn(server.dir),
        idle_close_delay_ms: 600_000,
      };
      const config = resolveConfig({ env, flags });
      const backend = createKittyBackend({
        run: server.runner,
        env,
        clock: createRealClock(),
        config,
        identity: detectAll(env),
        log: silentLogger,
      });
      await backend.probe();
      loop = new SessionLoop(
        {
          clock,
          log: silentLogger,
          emit: (m) => out.push(m),
          config,
          store: createMemoryStore(),
          processes: fakeProcesses(),
          owner: "1:1",
        },
        { backend, serverUrl: "http://127.0.0.1:4096", directory: server.dir },
      );
      const child = sid("ses_kittyChild");
      loop.handle({
        kind: "created",
        info: {
          id: child,
          parentId: sid("ses_parent"),
          title: "map the repository",
          directory: server.dir,
        },
      });
      loop.handle({ kind: "status", sessionId: child, status: "busy" });
      let paneId: PaneId | undefined;
      await until("the window to open", async () => {
        await clock.flush();
        const opened = out.find((m) => m.type === "pane.opened");
        paneId = opened?.type === "pane.opened" ? opened.paneId as PaneId : undefined;
        return paneId !== undefined;
      }, { ms: 30_000, maxIntervalMs: 50 });
      const title = async () => (await backend.inspect(paneId!))?.title;
      const shows = (text: string) =>
        until(`the window title ${JSON.stringify(text)}`, async () => {
          await clock.flush();
          return (await title()) === text;
        }, { ms: 15_000, maxIntervalMs: 50, context: () => `out: ${JSON.stringify(out)}` });

      await shows("[busy] map the repository");
      loop.handle({ kind: "status", sessionId: child, status: "busy", retry: 2 });
      await clock.advance(1000);
      await shows("[retry 2] map the repository");
      loop.handle({ kind: "status", sessionId: child, status: "idle" });
      loop.handle({ kind: "status", sessionId: child, status: "busy" });
      loop.handle({ kind: "status", sessionId: child, status: "idle" });
      await clock.advance(1000);
      await shows("[idle] map the repository");

      // The user closes the window; the next state change finds it gone, reported once.
      const closed = await server.rc(["close-window", `--match=id:${paneId}`]);
      assert.equal(closed.code, 0, closed.stderr);
      // kitty answers close-window when it has marked the window; the window leaves its list
      // only once the program in it has ended, later on a busy machine. A title written before
      // then succeeds, and nothing would report the pane gone on this stepped clock.
      await until("kitty to drop the closed window", async () => !await backend.inspect(paneId!), {
        ms: 15_000,
        maxIntervalMs: 50,
      });
      loop.handle({ kind: "status", sessionId: child, status: "busy" });
      await clock.advance(1000);
      await until("the window to be reported gone", async () => {
        await clock.flush();
        return out.some((m) => m.type === "pane.closed");
      }, { ms: 15_000, maxIntervalMs: 50, context: () => `out: ${JSON.stringify(out)}` });
      for (let i = 0; i < 5; i++) {
        loop.handle({ kind: "status", sessionId: child, status: "busy", retry: i + 1 });
        await clock.advance(1000);
      }
      assert.deepEqual(
        out.map((m) => `${m.type}${"reason" in m ? ` ${m.reason}` : ""}`),
        ["pane.opened", "pane.closed gone"],
      );
    } finally {
      await loop?.shutdown(true);
      await server.close();
    }
  },
});
