/**
 * A session loop on fakes for the loop tests: a fake backend, a simulated clock, an in-memory
 * store and process seam, a silent log, and every message it writes collected in order.
 *
 * @module
 */

import type { OutMessage } from "../../lib/bridge/protocol.ts";
import { type Config, resolveConfig } from "../../lib/config/config.ts";
import { type LoopContext, SessionLoop, type SessionLoopDeps } from "../../lib/session/loop.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { createFakeBackend, type FakeBackend } from "../fakes/fake_backend.ts";
import { createFakeClock, type FakeClock } from "../fakes/fake_clock.ts";
import { createMemoryStore, type FakeProcesses, fakeProcesses } from "../fakes/memory_store.ts";

/** Options of {@linkcode loopHarness}. */
export interface LoopHarnessOptions {
  /** Config keys, as flags over the defaults (no file, no environment). */
  flags?: Record<string, unknown>;
  /** The clock (give one when a dep needs it too). @default createFakeClock() */
  clock?: FakeClock;
  /** The backend. @default createFakeBackend() */
  backend?: FakeBackend;
  /** The process seam. @default fakeProcesses() */
  processes?: FakeProcesses;
  /** Deps to replace (a log, an `emit` of the test's own, a server client, the owner). */
  deps?: Partial<SessionLoopDeps>;
  /** Context to replace. @default backend, server http://127.0.0.1:4096, directory /work */
  ctx?: Partial<LoopContext>;
}

/** A loop and the fakes it runs on. */
export interface LoopHarness {
  /** The loop. */
  loop: SessionLoop;
  /** Its backend. */
  backend: FakeBackend;
  /** Its clock. */
  clock: FakeClock;
  /** Every message it wrote (unless `deps.emit` replaced the collector). */
  out: OutMessage[];
  /** Its store. */
  store: ReturnType<typeof createMemoryStore>;
  /** Its process seam. */
  processes: FakeProcesses;
  /** Its config. */
  config: Config;
}

/**
 * Builds a session loop on fakes.
 *
 * @param options Config flags, fakes and deps to use instead of the defaults.
 * @returns The loop and its fakes.
 */
export function loopHarness(options: LoopHarnessOptions = {}): LoopHarness {
  const config = resolveConfig({ env: () => undefined, flags: options.flags ?? {} });
  const clock = options.clock ?? createFakeClock();
  const backend = options.backend ?? createFakeBackend();
  const out: OutMessage[] = [];
  const store = createMemoryStore();
  const processes = options.processes ?? fakeProcesses();
  const loop = new SessionLoop(
    {
      clock,
      log: silentLogger,
      emit: (m) => out.push(m),
      config,
      store,
      processes,
      owner: "4242:100",
      ...options.deps,
    },
    { backend, serverUrl: "http://127.0.0.1:4096", directory: "/work", ...options.ctx },
  );
  return { loop, backend, clock, out, store, processes, config };
}
