/**
 * Benchmark: bridge throughput for events muxbridge does not act on (the noise OpenCode sends
 * most: `message.part.delta`, `message.part.updated`, `message.updated`), against a bare loop
 * that decodes the same bytes, splits lines and runs `JSON.parse` on each.
 *
 * Two bridge measurements:
 * - in memory: `runBridge` over the bytes in 64 KiB chunks (muxbridge's own code path);
 * - process: the real `main.ts bridge` process fed through a pipe, timed from `ready` to `bye`
 *   (adds the runtime's stdin and the pipe), against a bare process that reads the same pipe
 *   the same way and parses each line (`_bare_reader.ts`).
 * The event shapes follow the captured OpenCode events (research `opencode-events.jsonl`);
 * ids and text are generated here.
 *
 * Run: `deno run -A bench/throughput.ts [LINES]`
 *
 * @module
 */

import { type BridgeIO, runBridge } from "../lib/bridge/bridge.ts";
import { resolveConfig } from "../lib/config/config.ts";
import { silentLogger } from "../lib/sys/log.ts";
import { createFakeBackend } from "../tests/fakes/fake_backend.ts";
import { createFakeClock } from "../tests/fakes/fake_clock.ts";
import { createMemoryStore, fakeProcesses } from "../tests/fakes/memory_store.ts";
import { muxbridgeArgv } from "../tests/helpers/bridge_process.ts";
import { DENO, perSecond, type Row, stats, table } from "./_harness.ts";

const ID = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

function id(prefix: string, i: number): string {
  let s = prefix;
  for (let k = 0; k < 26; k++) s += ID[(i * 7 + k * 13) % ID.length];
  return s;
}

/**
 * Noise events in OpenCode's shapes, one JSON object per line.
 *
 * @param lines How many.
 * @returns The NDJSON text.
 */
export function noiseInput(lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) {
    const sessionID = id("ses_", i % 7);
    const messageID = id("msg_", i % 31);
    const partID = id("prt_", i % 97);
    switch (i % 4) {
      case 0:
      case 1:
        out.push(JSON.stringify({
          id: id("evt_", i),
          type: "message.part.delta",
          properties: { sessionID, messageID, partID, field: "text", delta: `word ${i} ` },
        }));
        break;
      case 2:
        out.push(JSON.stringify({
          id: id("evt_", i),
          type: "message.part.updated",
          properties: {
            sessionID,
            part: {
              id: partID,
              sessionID,
              messageID,
              type: "text",
              text: `The answer so far, part ${i}: lorem ipsum dolor sit amet`,
              time: { start: 1763600000000 + i },
            },
            time: 1763600000000 + i,
          },
        }));
        break;
      default:
        out.push(JSON.stringify({
          id: id("evt_", i),
          type: "message.updated",
          properties: {
            sessionID,
            info: {
              id: messageID,
              sessionID,
              role: "assistant",
              time: { created: 1763600000000 + i },
              parentID: id("msg_", i + 1),
              modelID: "big-pickle",
              providerID: "opencode",
              mode: "build",
              agent: "build",
              path: { cwd: "/srv/project", root: "/srv/project" },
              cost: 0,
              tokens: { input: 0, output: 0, reasoning: 0, cache: { read: 0, write: 0 } },
            },
          },
        }));
    }
  }
  return `${out.join("\n")}\n`;
}

function chunked(bytes: Uint8Array, size: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.slice(i, i + size));
  return out;
}

/** The bare loop: decode, split, `JSON.parse` each line, read its `type`. */
function bare(chunks: readonly Uint8Array[]): number {
  const decoder = new TextDecoder();
  let text = "";
  let seen = 0;
  for (const c of chunks) {
    text += decoder.decode(c, { stream: true });
    const lines = text.split("\n");
    text = lines.pop() ?? "";
    for (const line of lines) {
      if (line === "") continue;
      const v = JSON.parse(line);
      if (typeof v.type === "string") seen++;
    }
  }
  return seen;
}

/** `runBridge` over the chunks; resolves the number of lines written. */
async function inMemory(chunks: readonly Uint8Array[]): Promise<number> {
  const config = resolveConfig({ env: () => undefined, flags: {} });
  const backend = createFakeBackend();
  let written = 0;
  const io: BridgeIO = {
    input: (async function* () {
      yield* chunks;
    })(),
    write() {
      written++;
    },
    flush: () => Promise.resolve(),
    onSignal: () => () => {},
  };
  await runBridge({
    io,
    log: silentLogger,
    version: "bench",
    start: { directory: "/work" },
    resolveConfig: () => config,
    select: () => Promise.resolve({ ok: true, backend, probe: { binary: "fake", version: "1" } }),
    loopDeps: (c, emit) => ({
      clock: createFakeClock(),
      log: silentLogger,
      emit,
      config: c,
      store: createMemoryStore(),
      processes: fakeProcesses(),
      owner: "1:1",
    }),
  });
  return written;
}

/** A process fed through a pipe: ms from its `ready` line to its `bye` line. */
async function viaProcess(bytes: Uint8Array, argv: readonly string[]): Promise<number> {
  const [cmd, ...pre] = argv;
  const home = await Deno.makeTempDir({ prefix: "muxbridge-bench-" });
  try {
    const child = new Deno.Command(cmd, {
      args: pre,
      env: {
        PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
        HOME: home,
        XDG_CONFIG_HOME: `${home}/xdg`,
        MUXBRIDGE_STATE_DIR: `${home}/state`,
      },
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "null",
    }).spawn();
    const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    let readyAt = 0;
    let byeAt = 0;
    const reading = (async () => {
      while (true) {
        const { value, done } = await reader.read();
        if (done) return;
        buf += value;
        if (!readyAt && buf.includes('"type":"ready"')) readyAt = performance.now();
        if (buf.includes('"type":"bye"')) byeAt = performance.now();
      }
    })();
    const writer = child.stdin.getWriter();
    await writer.write(bytes);
    await writer.close();
    await reading;
    await child.status;
    if (!readyAt || !byeAt) throw new Error(`bridge process: no ready/bye in ${buf.slice(0, 300)}`);
    return byeAt - readyAt;
  } finally {
    await Deno.remove(home, { recursive: true }).catch(() => {});
  }
}

/**
 * Runs the benchmark.
 *
 * @param lines Lines per run.
 * @param rounds Runs of each variant (interleaved); the median counts.
 * @returns The report rows.
 */
export async function benchThroughput(lines = 200_000, rounds = 5): Promise<Row[]> {
  const bytes = new TextEncoder().encode(noiseInput(lines));
  const chunks = chunked(bytes, 64 * 1024);
  const t = {
    bare: [] as number[],
    mem: [] as number[],
    bareProc: [] as number[],
    proc: [] as number[],
  };
  const bridgeArgv = [...muxbridgeArgv(), "bridge", "--backend", "none"];
  const bareArgv = [DENO, "run", "--quiet", new URL("./_bare_reader.ts", import.meta.url).pathname];
  for (let r = 0; r < rounds + 1; r++) {
    let start = performance.now();
    if (bare(chunks) !== lines) throw new Error("bare loop miscounted");
    const tb = performance.now() - start;
    start = performance.now();
    await inMemory(chunks);
    const tm = performance.now() - start;
    const tbp = await viaProcess(bytes, bareArgv);
    const tp = await viaProcess(bytes, bridgeArgv);
    if (r === 0) continue; // warm-up
    t.bare.push(tb);
    t.mem.push(tm);
    t.bareProc.push(tbp);
    t.proc.push(tp);
  }
  const rate = (samples: number[]) => lines / (stats(samples).median / 1000);
  const b = rate(t.bare);
  const m = rate(t.mem);
  const p = rate(t.proc);
  const bp = rate(t.bareProc);
  const bench = `bridge throughput, noise (${lines} lines, ${(bytes.length / 1e6).toFixed(0)} MB)`;
  return [
    {
      bench,
      metric: "bare: decode + split + JSON.parse per line",
      value: perSecond(b),
      baseline: "",
      ratio: "",
      goal: "",
      ok: null,
    },
    {
      bench,
      metric: "runBridge in memory (line reader, parseLine, loop)",
      value: perSecond(m),
      baseline: perSecond(b),
      ratio: `${(m / b).toFixed(2)}x`,
      goal: "≥ 0.5x and ≥ 200k/s",
      ok: m / b >= 0.5 && m >= 200_000,
    },
    {
      bench,
      metric: "bare process: node:process stdin + split + JSON.parse",
      value: perSecond(bp),
      baseline: "",
      ratio: "",
      goal: "",
      ok: null,
    },
    {
      bench,
      metric: "bridge process through a pipe (ready → bye)",
      value: perSecond(p),
      baseline: perSecond(bp),
      ratio: `${(p / bp).toFixed(2)}x`,
      goal: "≥ 0.5x and ≥ 200k/s",
      ok: p / bp >= 0.5 && p >= 200_000,
    },
  ];
}

if (import.meta.main) {
  console.log(table(await benchThroughput(Number(Deno.args[0] ?? 200_000))));
}
