/**
 * Watches every process's argv on the machine (Linux `/proc/<pid>/cmdline`) for secrets, from
 * a worker thread that samples continuously (about every millisecond) until stopped, so that
 * short-lived processes (a `tmux` client lives a few milliseconds) are seen too. `markers`
 * count the processes whose argv holds a given string, live ({@linkcode ArgvWatch.seen}): a test
 * starts a process with a marker and waits until the watch has read it, which proves the watch
 * is running and reading argv. How fast it is stays statistical: a process living a few
 * milliseconds is seen only when a pass happens to run meanwhile.
 *
 * @module
 */

/** What a watch saw. */
export interface ArgvWatchReport {
  /** Passes over `/proc`. */
  samples: number;
  /** argv files read. */
  reads: number;
  /** Distinct (pid, argv) pairs seen. */
  processes: number;
  /** Processes whose argv held a needle (the needle replaced by `<SECRET>`). */
  hits: Array<{ pid: number; argv: string }>;
  /** Per marker, the processes whose argv held it. */
  marked: Record<string, number>;
  /** tmux processes seen: all, `source-file` ones, control-mode (`-C`) ones. */
  tmux: { clients: number; sourceFile: number; control: number };
  /** The mean time of one pass, ms. */
  meanPassMs: number;
}

/** A running watch. */
export interface ArgvWatch {
  /**
   * How many processes holding a marker the watch has seen so far (live, while it runs): a
   * test waits on this, so that a marker process is known to have been read before it ends.
   */
  seen(marker: string): number;
  /** Ends the watch; resolves with what it saw. */
  stop(): Promise<ArgvWatchReport>;
}

/**
 * Starts watching.
 *
 * @param needles Strings that must appear in no argv.
 * @param options Markers to count, and the pause between passes.
 * @returns The watch; always `stop()` it.
 */
export function watchArgv(
  needles: readonly string[],
  options: { markers?: readonly string[]; intervalMs?: number } = {},
): ArgvWatch {
  const worker = new Worker(new URL("./_argv_watch_worker.ts", import.meta.url), {
    type: "module",
  });
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const markers = [...options.markers ?? []];
  const counts = new Int32Array(new SharedArrayBuffer(4 * Math.max(1, markers.length)));
  const report = new Promise<ArgvWatchReport>((resolve, reject) => {
    worker.onmessage = (e) => resolve(e.data);
    worker.onerror = (e) => {
      e.preventDefault();
      reject(new Error(`argv watch failed: ${e.message}`));
    };
  });
  worker.postMessage({
    flag,
    counts,
    needles: [...needles],
    markers,
    intervalMs: options.intervalMs ?? 1,
  });
  let stopped: Promise<ArgvWatchReport> | null = null;
  return {
    seen(marker) {
      const i = markers.indexOf(marker);
      if (i < 0) throw new RangeError(`Cannot count marker ${JSON.stringify(marker)}: not watched`);
      return Atomics.load(counts, i);
    },
    stop() {
      return stopped ??= (async () => {
        Atomics.store(flag, 0, 1);
        Atomics.notify(flag, 0);
        try {
          return await report;
        } finally {
          worker.terminate();
        }
      })();
    },
  };
}
