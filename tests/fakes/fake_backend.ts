/**
 * An in-memory backend for loop and bridge tests: panes live in a map, every call is recorded,
 * and a test can make any operation fail, hang, or a pane vanish.
 *
 * @module
 */

import type {
  Backend,
  Capabilities,
  Check,
  Instance,
  LayoutRequest,
  LayoutResult,
  PaneInfo,
  ProbeResult,
  SpawnedPane,
  SpawnRequest,
} from "../../lib/backend/backend.ts";
import { MuxError } from "../../lib/sys/errors.ts";
import { validatePaneId } from "../../lib/sys/validate.ts";
import type { BackendName } from "../../backends/mod.ts";

/** A pane of the fake. */
export interface FakePane {
  /** Its id. */
  paneId: string;
  /** The request that opened it. */
  req: SpawnRequest;
  /** Its title. */
  title: string;
  /** Its program ended but the pane stays. */
  dead: boolean;
  /** Whether the program ends on interrupt. */
  exitsOnInterrupt: boolean;
}

/** The fake with its controls. */
export interface FakeBackend extends Backend {
  /** Open panes. */
  panes: Map<string, FakePane>;
  /** Calls, as `op paneId` strings. */
  log: string[];
  /** Makes the next N calls of an operation fail with this error. */
  failNext(
    op: "spawn" | "kill" | "interrupt" | "inspect" | "setTitle" | "findSpawned" | "instance",
    err: MuxError,
    times?: number,
  ): void;
  /**
   * Makes the next spawn lose its answer: it throws `timed_out` although the multiplexer makes
   * the pane (carrying the request's token), at once or, with `late`, only when the returned
   * function is called (a multiplexer that carries the split out after the timeout).
   */
  loseNextAnswer(late?: boolean): () => void;
  /** Kills are recorded but do nothing (a multiplexer that silently ignores them). */
  ignoreKills: boolean;
  /** Makes spawns wait until the returned release function is called. */
  holdSpawns(): () => void;
  /** Removes a pane behind muxbridge's back. */
  vanish(paneId: string): void;
  /** Layout requests received. */
  layouts: LayoutRequest[];
  /** Whether programs exit on interrupt (default true). */
  exitsOnInterrupt: boolean;
  /**
   * The instance `instance()` reports (default `{ address: "fake <name>", stamp: "server 1" }`); null: it cannot
   * tell. A test "restarts the multiplexer" by changing it.
   */
  instanceNow: Instance | null;
}

/**
 * Creates a fake backend.
 *
 * @param name The name it reports. @default "tmux"
 * @param caps Capabilities to override.
 * @returns The fake.
 */
export function createFakeBackend(
  name: BackendName = "tmux",
  caps: Partial<Capabilities> = {},
): FakeBackend {
  let next = 1;
  const failures = new Map<string, { err: MuxError; times: number }>();
  let hold: Promise<void> | null = null;
  let lose: { late: boolean; appear: (() => void) | null } | null = null;
  const fail = (op: string) => {
    const f = failures.get(op);
    if (!f) return;
    if (--f.times <= 0) failures.delete(op);
    throw f.err;
  };
  const need = (panes: Map<string, FakePane>, id: string) => {
    const p = panes.get(id);
    if (!p) throw new MuxError("pane_not_found", `Cannot find pane "${id}"`);
    return p;
  };
  const fake: FakeBackend = {
    name,
    capabilities: {
      layout: true,
      title: true,
      env: true,
      marks: true,
      focusSafe: true,
      spawnToken: true,
      ...caps,
    },
    ownership: { instance: "fake", pid: "multiplexer" },
    instanceNow: { address: `fake ${name}`, stamp: "server 1" },
    instance(): Promise<Instance | null> {
      fail("instance");
      return Promise.resolve(fake.instanceNow);
    },
    panes: new Map(),
    log: [],
    layouts: [],
    exitsOnInterrupt: true,
    ignoreKills: false,
    loseNextAnswer(late = false) {
      const entry = { late, appear: null as (() => void) | null };
      lose = entry;
      return () => entry.appear?.();
    },
    failNext(op, err, times = 1) {
      failures.set(op, { err, times });
    },
    holdSpawns() {
      let release!: () => void;
      hold = new Promise((r) => (release = r));
      return () => {
        hold = null;
        release();
      };
    },
    vanish(paneId) {
      fake.panes.delete(paneId);
    },
    probe(): Promise<ProbeResult> {
      return Promise.resolve({ binary: name, version: "9.9.9" });
    },
    async spawn(req): Promise<SpawnedPane> {
      fake.log.push(`spawn ${req.sessionId}`);
      if (hold) await hold;
      fail("spawn");
      const paneId = validatePaneId(`%${next++}`);
      const make = () =>
        void fake.panes.set(paneId, {
          paneId,
          req,
          title: req.title,
          dead: false,
          exitsOnInterrupt: fake.exitsOnInterrupt,
        });
      const lost = lose;
      if (lost) {
        lose = null;
        if (lost.late) lost.appear = make;
        else make();
        throw new MuxError("timed_out", `Cannot finish the spawn of ${req.sessionId}: no answer`);
      }
      make();
      return { paneId };
    },
    findSpawned(token): Promise<PaneInfo[]> {
      fake.log.push(`find ${token.slice(0, 6)}`);
      fail("findSpawned");
      return Promise.resolve(
        [...fake.panes.values()].filter((p) => p.req.token === token).map((p) => ({
          paneId: validatePaneId(p.paneId),
          dead: p.dead,
        })),
      );
    },
    inspect(paneId): Promise<PaneInfo | null> {
      fail("inspect");
      const p = fake.panes.get(paneId);
      return Promise.resolve(
        p
          ? {
            paneId: validatePaneId(p.paneId),
            dead: p.dead,
            title: p.title,
            sessionId: p.req.sessionId,
            owner: p.req.owner,
            // As a multiplexer that keeps the start command shows it.
            token: p.req.token ?? null,
          }
          : null,
      );
    },
    listOwned(): Promise<PaneInfo[]> {
      return Promise.resolve(
        [...fake.panes.values()].map((p) => ({
          paneId: validatePaneId(p.paneId),
          dead: p.dead,
          sessionId: p.req.sessionId,
          owner: p.req.owner,
        })),
      );
    },
    interrupt(paneId) {
      fake.log.push(`interrupt ${paneId}`);
      fail("interrupt");
      const p = need(fake.panes, paneId);
      if (p.exitsOnInterrupt) fake.panes.delete(paneId);
      return Promise.resolve();
    },
    kill(paneId) {
      fake.log.push(`kill ${paneId}`);
      fail("kill");
      need(fake.panes, paneId);
      if (!fake.ignoreKills) fake.panes.delete(paneId);
      return Promise.resolve();
    },
    setTitle(paneId, title) {
      fake.log.push(`title ${paneId} ${title}`);
      fail("setTitle");
      need(fake.panes, paneId).title = title;
      return Promise.resolve();
    },
    applyLayout(req): Promise<LayoutResult> {
      fake.layouts.push(req);
      return Promise.resolve({ applied: true, detail: "fake" });
    },
    doctor(): Promise<Check[]> {
      return Promise.resolve([{ name: `${name} fake`, status: "pass", detail: "fake" }]);
    },
  };
  return fake;
}

/**
 * Gives a fake a status place of its own (`setStatus`, `releaseStatus`), as tmux and herdr have:
 * every call is logged (`status %1 busy [busy] t`, `release %1 ses_x`), the pane's title follows.
 *
 * @param fake The fake.
 * @returns The same fake.
 */
export function withStatusPlace(fake: FakeBackend): FakeBackend {
  fake.setStatus = (paneId, status) => {
    fake.log.push(`status ${paneId} ${status.state} ${status.title}`);
    const pane = fake.panes.get(paneId);
    if (!pane) {
      return Promise.reject(new MuxError("pane_not_found", `Cannot find pane "${paneId}"`));
    }
    pane.title = status.title;
    return Promise.resolve();
  };
  fake.releaseStatus = (paneId, sessionId) => {
    fake.log.push(`release ${paneId} ${sessionId}`);
    return Promise.resolve();
  };
  return fake;
}
