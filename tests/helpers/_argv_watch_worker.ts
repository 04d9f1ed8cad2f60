/**
 * Private to `argv_watch.ts`: the sampling loop, run in a worker so that it samples on its own
 * thread while the test awaits real processes. A process is counted once per distinct
 * (pid, argv). To keep a pass short (so that a process living a few milliseconds is still
 * seen), a pass reads the argv of every new or young process (first seen under
 * {@linkcode YOUNG_MS} ago: a fork execs its program within that) and of every other process
 * only every {@linkcode FULL_EVERY}th pass.
 *
 * @module
 */

/// <reference lib="deno.worker" />

/** A process first seen this recently is read on every pass. */
const YOUNG_MS = 500;
/** Every this many passes, every process is read again. */
const FULL_EVERY = 20;

/** The start message. */
interface Start {
  /** `[stop flag]`, shared: the main thread sets it to 1 to end the loop. */
  flag: Int32Array;
  /** Per marker, shared: how many processes holding it were seen so far. */
  counts: Int32Array;
  /** What must never appear. */
  needles: string[];
  /** Strings whose processes are counted (to prove the sampler sees short-lived ones). */
  markers: string[];
  /** Pause between passes, ms. */
  intervalMs: number;
}

self.onmessage = (e: MessageEvent<Start>) => {
  const { flag, counts, needles, markers, intervalMs } = e.data;
  const decoder = new TextDecoder();
  const seen = new Set<string>();
  const firstSeen = new Map<string, number>();
  const hits: Array<{ pid: number; argv: string }> = [];
  const marked: Record<string, number> = Object.fromEntries(markers.map((m) => [m, 0]));
  const tmux = { clients: 0, sourceFile: 0, control: 0 };
  let samples = 0;
  let reads = 0;
  let passMs = 0;
  const redact = (s: string) => needles.reduce((t, n) => t.replaceAll(n, "<SECRET>"), s);
  while (Atomics.load(flag, 0) === 0) {
    const t0 = performance.now();
    const full = samples % FULL_EVERY === 0;
    const live = new Set<string>();
    for (const entry of Deno.readDirSync("/proc")) {
      const pid = entry.name;
      if (pid.charCodeAt(0) > 57) continue; // not a pid
      live.add(pid);
      const first = firstSeen.get(pid);
      if (first === undefined) firstSeen.set(pid, t0);
      else if (!full && t0 - first > YOUNG_MS) continue;
      let raw: string;
      try {
        raw = decoder.decode(Deno.readFileSync(`/proc/${pid}/cmdline`));
      } catch {
        continue; // gone meanwhile
      }
      reads++;
      if (raw === "") continue; // a kernel thread or a zombie
      const key = `${pid}\0${raw}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const argv = raw.split("\0").filter((a) => a !== "");
      if (needles.some((n) => raw.includes(n))) {
        hits.push({ pid: Number(pid), argv: redact(argv.join(" ")) });
      }
      markers.forEach((m, i) => {
        if (!raw.includes(m)) return;
        marked[m]++;
        Atomics.add(counts, i, 1);
      });
      if (/(^|\/)tmux$/.test(argv[0] ?? "")) {
        tmux.clients++;
        if (argv.includes("source-file")) tmux.sourceFile++;
        if (argv.includes("-C") || argv.includes("-CC")) tmux.control++;
      }
    }
    // A pid that went away may come back as another process: forget it.
    for (const pid of firstSeen.keys()) if (!live.has(pid)) firstSeen.delete(pid);
    passMs += performance.now() - t0;
    samples++;
    Atomics.wait(flag, 0, 0, intervalMs);
  }
  self.postMessage({
    samples,
    reads,
    processes: seen.size,
    hits,
    marked,
    tmux,
    meanPassMs: samples ? passMs / samples : 0,
  });
  self.close();
};
