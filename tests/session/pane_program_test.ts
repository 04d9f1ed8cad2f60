/**
 * The pane's start command, run by a real `/bin/sh`: the program's argv arrives intact, a
 * failure is held and reported in a private file, success and signals are not.
 */

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  attachingLine,
  HOLD_NAME,
  HOLD_SCRIPT,
  holdArgv,
  isHoldProgram,
} from "../../lib/session/pane_program.ts";
import { createRunner } from "../../lib/sys/exec.ts";
import { createRandom, hostileString } from "../helpers/hostile.ts";
import { requires, tool } from "../helpers/requires.ts";

const run = createRunner();

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), "muxbridge-hold-"));
}

Deno.test("holdArgv() puts the hold, the slack and the exit file before the program", () => {
  assert.deepEqual(holdArgv(["opencode", "attach"], { holdMs: 30_000, slackMs: 2000 }), [
    "/bin/sh",
    "-c",
    HOLD_SCRIPT,
    HOLD_NAME,
    "30",
    "4",
    "",
    "0",
    "",
    "opencode",
    "attach",
  ]);
  assert.deepEqual(
    holdArgv(["x"], {
      holdMs: 0,
      slackMs: 2000,
      exitFile: "/s/e",
      ownsTitle: true,
      banner: "[muxbridge] attaching",
    }).slice(4),
    ["0", "0", "/s/e", "1", "[muxbridge] attaching", "x"],
  );
  assert.deepEqual(holdArgv(["x"], { holdMs: 1 }).slice(4, 6), ["1", "2"]);
});

Deno.test(
  "the start command passes hostile arguments to the program byte for byte",
  requires("sh", [tool("sh")]),
  async () => {
    const r = createRandom();
    const dir = tempDir();
    try {
      for (let i = 0; i < 40; i++) {
        const args = [hostileString(r, { longChance: 0 }), hostileString(r, { longChance: 0 })];
        // Each argument after a marker: a decoder drops a BOM (U+FEFF, one of the hostile
        // characters) that starts the output, which is not the start command's doing.
        const argv = holdArgv(["printf", ">%s\\0", ...args], {
          holdMs: 0,
          exitFile: join(dir, "e"),
        });
        const out = await run(argv, { timeoutMs: 10_000 });
        assert.equal(out.code, 0);
        assert.deepEqual(out.stdout.split("\0").slice(0, -1), args.map((a) => `>${a}`));
      }
      assert.throws(() => statSync(join(dir, "e")), /ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

Deno.test(
  "the start command shows its line before the program starts, byte for byte, and none when empty",
  requires("sh", [tool("sh")]),
  async () => {
    const line = attachingLine('fix "%s" $HOME `x` -n', "ses_1", "http://127.0.0.1:4096");
    const shown = await run(holdArgv(["printf", "program"], { holdMs: 0, banner: line }), {
      timeoutMs: 10_000,
    });
    assert.equal(shown.stdout, `${line}\nprogram`);
    const none = await run(holdArgv(["printf", "program"], { holdMs: 0 }), { timeoutMs: 10_000 });
    assert.equal(none.stdout, "program");
  },
);

Deno.test("attachingLine() names the title, the session and the server", () => {
  assert.equal(
    attachingLine("map the lib", "ses_1", "http://127.0.0.1:4096"),
    '[muxbridge] attaching to "map the lib" (ses_1) on http://127.0.0.1:4096 …',
  );
  assert.equal(
    attachingLine("", "ses_1", "http://127.0.0.1:4096"),
    "[muxbridge] attaching to ses_1 on http://127.0.0.1:4096 …",
  );
});

Deno.test("isHoldProgram() knows a pane's start command by its exit file, and nothing else", () => {
  const argv = holdArgv(["opencode", "attach"], { holdMs: 30_000, exitFile: "/state/exits/ab" });
  assert.equal(isHoldProgram(argv, "/state/exits/ab"), true);
  assert.equal(isHoldProgram(argv, "/state/exits/cd"), false);
  assert.equal(isHoldProgram(argv, ""), false);
  assert.equal(isHoldProgram(holdArgv(["opencode"], { holdMs: 0 }), ""), false);
  assert.equal(
    isHoldProgram(
      ["/bin/sh", "-c", "other", HOLD_NAME, "0", "0", "/state/exits/ab"],
      "/state/exits/ab",
    ),
    false,
  );
});

Deno.test(
  "the start command tells OpenCode to leave the title alone only when muxbridge owns it",
  requires("sh", [tool("sh")]),
  async () => {
    const probe = ["sh", "-c", 'printf "%s" "${OPENCODE_DISABLE_TERMINAL_TITLE-unset}"'];
    const owned = await run(holdArgv(probe, { holdMs: 0, ownsTitle: true }), { timeoutMs: 10_000 });
    assert.equal(owned.stdout, "1");
    const not = await run(holdArgv(probe, { holdMs: 0 }), { timeoutMs: 10_000, env: {} });
    assert.equal(not.stdout, "unset");
  },
);

Deno.test(
  "the start command reports a failure in a private file, says why and holds",
  requires("sh", [tool("sh")]),
  async () => {
    const dir = tempDir();
    const file = join(dir, "0123456789abcdef0123456789abcdef");
    try {
      const argv = holdArgv(["sh", "-c", 'echo "Error: Unable to connect" >&2; exit 3'], {
        holdMs: 1000,
        exitFile: file,
      });
      // Slack 0 here: held 1 s plus the fixed 2 s, then it ends by itself with the code.
      const out = await run(argv, { timeoutMs: 20_000 });
      assert.equal(out.code, 3);
      assert.match(out.stderr, /Unable to connect/);
      assert.match(out.stdout, /\[muxbridge\] sh exited with code 3; this pane closes in 1 s/);
      assert.equal(readFileSync(file, "utf8"), "3\n");
      assert.equal(statSync(file).mode & 0o777, 0o600);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

Deno.test(
  "the start command neither holds nor reports a program ended by a signal",
  requires("sh", [tool("sh")]),
  async () => {
    const dir = tempDir();
    try {
      const argv = holdArgv(["sh", "-c", "kill -TERM $$"], {
        holdMs: 600_000,
        exitFile: join(dir, "e"),
      });
      const out = await run(argv, { timeoutMs: 10_000 });
      assert.equal(out.code, 143);
      assert.equal(out.stdout, "");
      assert.throws(() => statSync(join(dir, "e")), /ENOENT/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

Deno.test(
  "the start command is valid POSIX sh (shellcheck)",
  requires("shellcheck", [tool("shellcheck")]),
  async () => {
    // SC2016: the expressions are meant for the inner shell, not expanded here.
    const out = await run(["shellcheck", "-s", "sh", "-e", "SC2016", "-"], {
      timeoutMs: 20_000,
      stdin: HOLD_SCRIPT,
    });
    assert.equal(out.code, 0, out.stdout);
  },
);

Deno.test("the start command is one line without a backslash or control character (cmux types it)", () => {
  assert.doesNotMatch(HOLD_SCRIPT, /[\\\p{Cc}]/u);
});
