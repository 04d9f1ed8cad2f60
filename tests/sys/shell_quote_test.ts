import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { quote, shArgv, shellCommand } from "../../lib/sys/shell_quote.ts";
import { requires, tool, which } from "../helpers/requires.ts";
import { runTag } from "../helpers/run_tag.ts";

/** A program that writes each of its arguments NUL-terminated, so the bytes show every boundary. */
const PRINTF = ["printf", "%s\\0"];

/** The most bytes one `sh -c` script may have: Linux caps one argv element at 128 KiB. */
const MAX_SCRIPT_BYTES = 100_000;

const NASTY = [
  "$(touch x)",
  "'; rm -rf ~; '",
  "-n",
  "--",
  "",
  "'",
  '"',
  "''",
  "\\",
  "\\'",
  "`touch tick`",
  "$(touch dollar)",
  "a; touch semi",
  "a && touch and",
  "a | tee piped",
  "> redirected",
  "< /etc/passwd",
  "$HOME",
  "${IFS}",
  "*",
  "~",
  "-e",
  "--help",
  "\n",
  "\r\n",
  "\t",
  "\x1b]0;pwned\x07",
  "\u202e",
  "\u200b",
  " leading and trailing ",
  "%s%s%n",
  "!",
  "#comment",
  "x".repeat(10 * 1024),
  "'".repeat(10 * 1024),
];

const PIECES = [
  "'",
  '"',
  "'\\''",
  "$(",
  ")",
  "$(touch p1)",
  "`",
  "`touch p2`",
  ";",
  "; touch p3",
  "|",
  "&",
  "&&",
  "<",
  ">",
  ">p4",
  "\n",
  "\t",
  "\r",
  "\x1b]0;title\x07",
  "\x1b[31m",
  "\u202e",
  "\u200b",
  "\u2028",
  "-",
  "--",
  "-n",
  "*",
  "?",
  "[a-z]",
  "{a,b}",
  "~",
  "$HOME",
  "${IFS}",
  "$$",
  "\\",
  "!",
  "#",
  "=",
  " ",
  "%s",
  "%b",
  "\\0",
  "é",
  "日本",
  "🙂",
];

/** mulberry32: a small seeded PRNG, so a failure names a seed that reproduces it. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One random code point: any plane, never NUL and never a surrogate (argv carries UTF-8). */
function randomCodePoint(rand: () => number): string {
  const r = rand();
  let cp: number;
  if (r < 0.5) cp = 1 + Math.floor(rand() * 0x7f);
  else if (r < 0.9) cp = 0x80 + Math.floor(rand() * (0xd800 - 0x80));
  else cp = 0xe000 + Math.floor(rand() * (0x10ffff - 0xe000));
  return String.fromCodePoint(cp);
}

function randomValue(rand: () => number): string {
  const long = rand() < 0.02;
  const target = long ? 1024 + Math.floor(rand() * (9 * 1024)) : Math.floor(rand() * 40);
  let out = rand() < 0.15 ? "-" : "";
  while (out.length < target) {
    out += rand() < 0.6 ? PIECES[Math.floor(rand() * PIECES.length)] : randomCodePoint(rand);
  }
  return long ? out.slice(0, 10 * 1024).replace(/[\ud800-\udbff]$/, "") : out;
}

const encoder = new TextEncoder();

/** What `printf '%s\0' values…` must write. */
function expectedBytes(values: readonly string[]): Uint8Array {
  return encoder.encode(values.map((v) => `${v}\0`).join(""));
}

/** Splits values into batches whose quoted command stays under the argv limit. */
function batches(values: readonly string[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const v of values) {
    const size = encoder.encode(quote(v)).byteLength + 1;
    if (current.length > 0 && bytes + size > MAX_SCRIPT_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(v);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

async function runIn(cwd: string, argv: readonly string[]) {
  const { code, stdout, stderr } = await new Deno.Command(argv[0], {
    args: argv.slice(1),
    cwd,
    // HOME is the temp dir: should quoting ever break, `rm -rf ~` can only hit the test's own
    // directory (whose absence then fails the side-effect check).
    clearEnv: true,
    env: { PATH: "/usr/bin:/bin", HOME: cwd, ...runTag() },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code, stdout, stderr: new TextDecoder().decode(stderr) };
}

function withTempDir(fn: (dir: string) => Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "muxbridge-quote-"));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

Deno.test("quote() wraps a value in single quotes once", () => {
  assert.equal(quote(""), "''");
  assert.equal(quote("plain"), "'plain'");
  assert.equal(quote('$(x) `y` "z"'), "'$(x) `y` \"z\"'");
});

Deno.test("quote() writes a single quote as '\\''", () => {
  assert.equal(quote("it's"), "'it'\\''s'");
  assert.equal(quote("'"), "''\\'''");
});

Deno.test("quote() refuses NUL with a TypeError", () => {
  assert.throws(() => quote("a\0b"), TypeError);
  assert.throws(() => quote("\0"), TypeError);
});

Deno.test("shellCommand() refuses NUL in any element with a TypeError", () => {
  assert.throws(() => shellCommand(["printf", "ok", "bad\0value"]), TypeError);
  assert.throws(() => shArgv(["pro\0gram"]), TypeError);
});

Deno.test("shellCommand() refuses an empty argv with a TypeError", () => {
  assert.throws(() => shellCommand([]), TypeError);
  assert.throws(() => shArgv([]), TypeError);
});

Deno.test("shellCommand() quotes the program as well as its arguments", () => {
  assert.equal(shellCommand(["opencode", "attach", "http://x"]), "'opencode' 'attach' 'http://x'");
});

Deno.test("shArgv() runs /bin/sh -c with exec and the quoted command", () => {
  assert.deepEqual(shArgv(["opencode", "--dir", "/a b"]), [
    "/bin/sh",
    "-c",
    "exec 'opencode' '--dir' '/a b'",
  ]);
});

Deno.test(
  "shellCommand() delivers the nasty fixed values byte for byte through a real sh",
  withTempDir(async (dir) => {
    const { code, stdout, stderr } = await runIn(dir, [
      "/bin/sh",
      "-c",
      shellCommand([...PRINTF, ...NASTY]),
    ]);
    assert.equal(stderr, "");
    assert.equal(code, 0);
    assert.deepEqual(stdout, expectedBytes(NASTY));
    assert.deepEqual(readdirSync(dir), [], "the shell created files: quoting leaked");
  }),
);

Deno.test(
  "shellCommand() delivers 2,000 random hostile values byte for byte through a real sh",
  withTempDir(async (dir) => {
    const seed = 0x5eed_2026;
    const rand = prng(seed);
    const values = Array.from({ length: 2000 }, () => randomValue(rand));
    assert.ok(values.some((v) => v.length >= 9 * 1024), "the generator makes long values");
    assert.ok(values.some((v) => v.startsWith("-")), "the generator makes leading dashes");
    const groups = batches(values);
    for (const [i, group] of groups.entries()) {
      const { code, stdout, stderr } = await runIn(dir, [
        "/bin/sh",
        "-c",
        shellCommand([...PRINTF, ...group]),
      ]);
      const where = `seed ${seed}, batch ${i} of ${groups.length}`;
      assert.equal(stderr, "", where);
      assert.equal(code, 0, where);
      const want = expectedBytes(group);
      if (!bytesEqual(stdout, want)) {
        const got = new TextDecoder().decode(stdout).split("\0");
        const bad = group.findIndex((v, j) => got[j] !== v);
        assert.fail(
          `${where}: value ${bad} arrived as ${JSON.stringify(got[bad])}, sent ${
            JSON.stringify(group[bad])
          }`,
        );
      }
    }
    assert.deepEqual(readdirSync(dir), [], "the shell created files: quoting leaked");
  }),
);

Deno.test(
  "shArgv() delivers hostile values byte for byte and leaves no side effect",
  withTempDir(async (dir) => {
    const rand = prng(7);
    const values = [...NASTY, ...Array.from({ length: 200 }, () => randomValue(rand))];
    for (const group of batches(values)) {
      const { code, stdout, stderr } = await runIn(dir, shArgv([...PRINTF, ...group]));
      assert.equal(stderr, "");
      assert.equal(code, 0);
      assert.ok(bytesEqual(stdout, expectedBytes(group)), "bytes differ");
    }
    assert.deepEqual(readdirSync(dir), []);
  }),
);

Deno.test(
  "shArgv() execs the program in place of the shell",
  withTempDir(async (dir) => {
    // With exec, the inner sh replaces the outer one, so its parent is this test process.
    const { code, stdout } = await runIn(dir, shArgv(["/bin/sh", "-c", "echo $PPID"]));
    assert.equal(code, 0);
    assert.equal(new TextDecoder().decode(stdout).trim(), String(Deno.pid));
  }),
);

Deno.test(
  "shellCommand() also survives bash, the usual login shell",
  requires("shellCommand() under bash", [tool("bash")]),
  withTempDir(async (dir) => {
    const { code, stdout } = await runIn(dir, [
      which("bash") ?? "bash",
      "-c",
      shellCommand([...PRINTF, ...NASTY]),
    ]);
    assert.equal(code, 0);
    assert.deepEqual(stdout, expectedBytes(NASTY));
    assert.deepEqual(readdirSync(dir), []);
  }),
);

function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  if (a.byteLength !== b.byteLength) return false;
  for (let i = 0; i < a.byteLength; i++) if (a[i] !== b[i]) return false;
  return true;
}
