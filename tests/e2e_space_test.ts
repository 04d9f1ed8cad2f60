/**
 * End to end, on a private real tmux server: 20 children created at once in a 120×40 window that
 * holds the user's two panes (the anchor, running "OpenCode", and one more). Every child gets a
 * pane, overflowing into a muxbridge window when the anchor's window is full, and the user's
 * panes are never reshaped: a control-mode client sees every layout change as it happens.
 *
 * What "keep their size" means here, precisely:
 * - the user's other pane has the same position and size in every layout of the window, from
 *   before the first child to after the last one closed;
 * - the anchor changes exactly once while children open (the first child's split takes its
 *   right half), stays so while 19 more open, layouts run and those 19 close, and gets its
 *   space back when the first child's pane closes.
 */

import assert from "node:assert/strict";
import { events, startBridge } from "./helpers/bridge_process.ts";
import { clock, isType, livePanes, realLife } from "./helpers/real_life.ts";
import { until } from "./helpers/until.ts";
import { writeStandIn } from "./helpers/stand_in.ts";
import { serveFakeOpencode } from "./helpers/fake_opencode_server.ts";
import { type LayoutChange, observeLayouts } from "./helpers/tmux_observer.ts";

const P = "ses_spaceParent";
const names = (n: number) =>
  Array.from({ length: n }, (_, i) => `ses_space${String(i).padStart(2, "0")}`);

/** The geometry of `pane` in each layout change of `window` that shows it. */
const seen = (changes: LayoutChange[], window: string, pane: string) =>
  changes.filter((c) => c.window === window && c.panes.has(pane)).map((c) => c.panes.get(pane)!);

async function manyAtOnce(placement: "split" | "window", N: number) {
  const children = names(N);
  const s = await realLife(
    // The pane watch is not under test here: poll seldom, leave tmux to the spawns.
    async (dir) => ({ placement, poll_interval_ms: 2000, opencode_bin: await writeStandIn(dir) }),
    { width: 120, height: 40, program: ["sh", "-c", "printf 'OpenCode\\n'; exec sleep 100000"] },
  );
  const server = serveFakeOpencode();
  server.fake.knowAll = true; // the tests invent session ids
  try {
    const anchor = s.server.anchorPane;
    const user = await s.server.userPane("-h");
    const before = await livePanes(s.server);
    const window = before.get(anchor)!.window;
    const observer = await observeLayouts(s.server);
    const bridge = startBridge(["--url", server.url, "--dir", s.dir], s.env);
    let opened: Array<Record<string, unknown>> = [];
    let openMs = 0;
    try {
      await bridge.waitFor(isType("ready"));
      const lines: unknown[] = [events.created(P, "parent", null, s.dir)];
      for (const id of children) {
        lines.push(events.created(id, id, P, s.dir), events.status(id, "busy"));
      }
      const sentAt = clock.now();
      await bridge.sendRaw(lines.map((l) => JSON.stringify(l) + "\n").join(""));
      await until(
        `${N} panes to open`,
        () => bridge.lines.filter(isType("pane.opened")).length >= N,
        { ms: 120_000 },
      );
      openMs = clock.now() - sentAt;
      opened = bridge.lines.filter(isType("pane.opened"));
      const live = await livePanes(s.server);
      const windows = new Map<string, number>();
      for (const o of opened) {
        const w = live.get(String(o.paneId))!.window;
        windows.set(w, (windows.get(w) ?? 0) + 1);
      }
      console.log(
        `${placement}: ${N} panes opened in ${openMs} ms; per window ${
          JSON.stringify(Object.fromEntries(windows))
        } (anchor window ${window})`,
      );
      if (placement === "window") assert.equal(windows.get(window), undefined);
      else assert.ok((windows.get(window) ?? 0) > 0, "some children split the anchor's window");
      // 120x40 holds them all in one tiled overflow window (at least 20x5 each): never two.
      assert.equal(
        [...windows.keys()].filter((w) => w !== window).length,
        1,
        "one overflow window",
      );

      // Close all but the first child's pane, then the first one.
      const firstSession = String(opened[0].sessionID);
      for (const id of children.filter((c) => c !== firstSession)) {
        await bridge.send(events.deleted(id, P, s.dir));
      }
      await until(
        `${N - 1} panes to close`,
        () => bridge.lines.filter(isType("pane.closed")).length >= N - 1,
        { ms: 120_000 },
      );
      await bridge.send(events.deleted(firstSession, P, s.dir));
      await bridge.waitFor(isType("pane.closed", firstSession));
      bridge.kill("SIGTERM");
      const bye = await bridge.waitFor(isType("bye"));
      assert.equal(bye.closed, 0);
    } finally {
      bridge.kill("SIGKILL");
      await bridge.status.catch(() => {});
      await observer.stop();
    }

    // Every child got exactly one pane, and none failed.
    assert.deepEqual(opened.map((o) => o.sessionID).sort(), children);
    assert.equal(new Set(opened.map((o) => o.paneId)).size, N, "no pane id twice");
    assert.deepEqual(bridge.lines.filter(isType("pane.failed")), []);
    assert.deepEqual(bridge.lines.filter(isType("pane.skipped")), []);
    assert.equal(
      bridge.lines.filter(isType("pane.closed", undefined, "deleted")).length,
      N,
    );

    const changes = observer.changes;
    const userGeometry = before.get(user)!.geometry;
    const anchorGeometry = before.get(anchor)!.geometry;
    // The user's other pane never moved or changed size.
    for (const g of seen(changes, window, user)) assert.equal(g, userGeometry, "user pane");
    const anchorSeen = seen(changes, window, anchor);
    const distinct = anchorSeen.filter((g, i) => i === 0 || g !== anchorSeen[i - 1]);
    if (placement === "window") {
      assert.ok(distinct.every((g) => g === anchorGeometry), `anchor: ${distinct}`);
    } else {
      // Resized once by the first split, restored when that pane closed, nothing in between.
      assert.deepEqual(
        distinct.map((g) => g === anchorGeometry ? "original" : "split"),
        ["split", "original"],
        `anchor geometries in order: ${distinct.join(" | ")}`,
      );
      const firstPane = String(opened[0].paneId);
      const firstSplit = changes.find((c) => c.window === window && c.panes.has(firstPane));
      assert.ok(firstSplit, "the first child's pane appeared in the anchor's window");
      assert.notEqual(firstSplit.panes.get(anchor), anchorGeometry, "its split took the space");
    }
    const after = await livePanes(s.server);
    assert.equal(after.get(anchor)!.geometry, anchorGeometry);
    assert.equal(after.get(user)!.geometry, userGeometry);
    assert.deepEqual([...after.keys()].sort(), [anchor, user].sort(), "nothing else is left");
    console.log(
      `${placement}: ${changes.length} layout changes observed, ${
        changes.filter((c) => c.window === window).length
      } in the user's window; user panes unchanged`,
    );
  } finally {
    await server.close();
    await s.close();
  }
}

Deno.test("bridge gives 20 children created at once a pane each in a 120x40 window and never reshapes the user's two panes (placement split)", async () => {
  await manyAtOnce("split", 20);
});

Deno.test("bridge with placement window puts 8 children created at once in a muxbridge window and leaves the user's window alone", async () => {
  await manyAtOnce("window", 8);
});
