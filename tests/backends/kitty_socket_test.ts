/**
 * kitty's remote control over its socket (`backends/kitty/_socket.ts`): the translation of every
 * argv shape the backend builds, checked against what the real `kitty @` client (0.26.5 here)
 * sends for the same argv to a socket of the test's own; the answers read as `kitty @` prints
 * them; and the fall back to `kitty @` when nothing listens.
 */

import assert from "node:assert/strict";
import { createServer, type Server } from "node:net";
import { launchArgs } from "../../backends/kitty/_launch.ts";
import {
  decodeKittyAnswer,
  encodeKittyMessage,
  KITTY_END,
  kittyMessage,
  kittySocketPath,
  kittySocketRun,
} from "../../backends/kitty/_socket.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { isMuxError } from "../../lib/sys/errors.ts";
import { createRunner } from "../../lib/sys/exec.ts";
import { unixRequest, type UnixRequester } from "../../lib/sys/unix_request.ts";
import { requires, tool } from "../helpers/requires.ts";

const clock = createRealClock();
const TOKEN = "0123456789abcdef0123456789abcdef";
const PREFIX = "\x1bP@kitty-cmd";

/** Every argv shape the backend sends, built by its own code where it has a builder. */
const SHAPES: Array<readonly string[]> = [
  ["ls"],
  launchArgs({
    title: "fix the bug",
    cwd: "/tmp",
    argv: ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_1"],
    anchor: "1",
    nextTo: false,
    token: TOKEN,
  }).args,
  launchArgs({ title: "", cwd: "/tmp/$HOME", argv: ["@x", "y z"], nextTo: false }).args,
  ["close-window", "--match=id:3"],
  ["send-text", "--match=id:3", "\\x03"],
  ["set-window-title", "--match=id:3", "--", "a", "title"],
  ["set-window-title", "--match=id:3", "--"],
  ["focus-window", "--match=id:3"],
  ["goto-layout", "--match=window_id:1", "tall"],
];

Deno.test("kittyMessage() translates each shape the backend sends and nothing else", () => {
  assert.deepEqual(kittyMessage(["ls"]), { cmd: "ls", payload: {}, answer: true });
  assert.deepEqual(kittyMessage(["send-text", "--match=id:3", "\\x03"]), {
    cmd: "send-text",
    payload: { match: "id:3", data: "text:\x03" },
    answer: false,
  });
  assert.deepEqual(kittyMessage(["set-window-title", "--match=id:3", "--"])?.payload, {
    match: "id:3",
    temporary: false,
    self: true,
  });
  const launch = kittyMessage([
    "launch",
    "--type=window",
    "--keep-focus",
    "--var=a=1",
    "--var=b=2",
    "--next-to=id:1",
    "--",
    "--not-an-option",
  ]);
  assert.deepEqual(launch?.payload, {
    args: ["--not-an-option"],
    type: "window",
    keep_focus: true,
    next_to: "id:1",
    var: ["a=1", "b=2"],
  });
  // Shapes it does not know run through `kitty @`, which knows them.
  for (
    const args of [
      [],
      ["ls", "--all-env-vars"],
      ["send-text", "--match=id:3", "hello"],
      ["send-text", "--match=id:3", "--stdin"],
      ["close-window"],
      ["launch", "--hold", "sh"],
      ["launch", "--title=a", "--title=b", "sh"],
      ["resize-window", "--match=id:3"],
    ]
  ) assert.equal(kittyMessage(args), undefined, args.join(" "));
});

Deno.test("kittySocketPath() takes unix:/path only; abstract sockets and tcp go to kitty @", () => {
  assert.equal(kittySocketPath("unix:/tmp/kitty-1"), "/tmp/kitty-1");
  assert.equal(kittySocketPath("unix:@kitty"), undefined);
  assert.equal(kittySocketPath("tcp:localhost:5000"), undefined);
});

Deno.test("decodeKittyAnswer() prints what kitty @ prints, and reports anything else", () => {
  const argv = ["kitty", "@", "ls"];
  assert.deepEqual(decodeKittyAnswer(`${PREFIX}{"ok":true,"data":"7"}`, argv), {
    code: 0,
    stdout: "7\n",
    stderr: "",
    argv,
  });
  assert.deepEqual(decodeKittyAnswer(`${PREFIX}{"ok":true}`, argv).stdout, "");
  const refused = decodeKittyAnswer(
    `${PREFIX}{"ok":false,"error":"No matching windows for expression: id:9","tb":"Traceback"}`,
    argv,
  );
  assert.equal(refused.code, 1);
  assert.equal(refused.stderr, "Traceback\nNo matching windows for expression: id:9\n");
  for (const junk of ["", "{}", `${PREFIX}not json`, `${PREFIX}{"data":1}`]) {
    assert.throws(
      () => decodeKittyAnswer(junk, argv),
      (e: unknown) => isMuxError(e, "unparseable_output"),
    );
  }
});

Deno.test("kittySocketRun() leaves a socket nothing listens on to kitty @, and words a lost answer", async () => {
  const options = { timeoutMs: 1000, clock, shown: ["kitty", "@", "ls"] };
  const ls = kittyMessage(["ls"])!;
  const missing: UnixRequester = () =>
    Promise.resolve({ ok: false, reason: "unreachable", sent: false, detail: "ENOENT" });
  assert.equal(await kittySocketRun(missing, "/nowhere", ls, "0.26.5", options), undefined);
  const silent: UnixRequester = () =>
    Promise.resolve({ ok: false, reason: "timed_out", sent: true, detail: "no answer" });
  await assert.rejects(
    kittySocketRun(silent, "/s", ls, "0.26.5", options),
    (e: unknown) => isMuxError(e, "timed_out"),
  );
  const dropped: UnixRequester = () =>
    Promise.resolve({ ok: false, reason: "closed", sent: true, detail: "ECONNRESET" });
  await assert.rejects(
    kittySocketRun(dropped, "/s", ls, "0.26.5", options),
    (e: unknown) => isMuxError(e, "backend_unreachable"),
  );
});

/** A socket that records what is sent to it and answers every command with `answer`. */
async function recordingSocket(
  dir: string,
  answer: string,
): Promise<{ path: string; server: Server; sent: Array<Record<string, unknown>> }> {
  const path = `${dir}/kitty.sock`;
  const sent: Array<Record<string, unknown>> = [];
  const server = createServer((socket) => {
    let text = "";
    socket.on("data", (chunk) => {
      text += chunk.toString();
      let end: number;
      while ((end = text.indexOf(KITTY_END)) >= 0) {
        const message = text.slice(0, end);
        text = text.slice(end + KITTY_END.length);
        if (!message.startsWith(PREFIX)) continue;
        const parsed = JSON.parse(message.slice(PREFIX.length));
        sent.push(parsed);
        if (!parsed.no_response) socket.write(`${PREFIX}${answer}${KITTY_END}`);
      }
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { path, server, sent };
}

Deno.test({
  name: "kittyMessage() sends what the real kitty @ sends for every shape the backend builds",
  ...requires("kitty @ against a recording socket", [tool("kitty")]),
  async fn() {
    const dir = await Deno.makeTempDir({ prefix: "muxbridge-kitty-rc-" });
    const { path, server, sent } = await recordingSocket(dir, '{"ok":true,"data":"7"}');
    const run = createRunner();
    const env = { HOME: dir, XDG_CONFIG_HOME: dir, KITTY_LISTEN_ON: "" };
    const viaCli = async (args: readonly string[]) => {
      const before = sent.length;
      const r = await run(["kitty", "@", "--to", `unix:${path}`, ...args], {
        timeoutMs: 60_000,
        env,
      });
      assert.equal(r.code, 0, `kitty @ ${args.join(" ")}: ${r.stderr}`);
      assert.equal(sent.length, before + 1, `kitty @ ${args.join(" ")} sent one command`);
      return sent[before];
    };
    try {
      // What kitty fills in for a launch option not sent: the defaults `kitty @ launch` sends.
      const defaults = (await viaCli(["launch"])).payload as Record<string, unknown>;
      for (const args of SHAPES) {
        const ours = kittyMessage(args);
        assert.ok(ours, `translated: ${args.join(" ")}`);
        const theirs = await viaCli(args);
        assert.equal(theirs.cmd, ours.cmd);
        assert.equal(Boolean(theirs.no_response), !ours.answer, `${ours.cmd}: no_response`);
        const cli = (theirs.payload ?? {}) as Record<string, unknown>;
        for (const [key, value] of Object.entries(ours.payload)) {
          assert.deepEqual(value, cli[key], `${args.join(" ")}: ${key}`);
        }
        for (const [key, value] of Object.entries(cli)) {
          if (key in ours.payload) continue;
          const unset = ours.cmd === "launch" ? defaults[key] : undefined;
          assert.ok(
            ours.cmd === "launch" ? JSON.stringify(value) === JSON.stringify(unset) : !value,
            `${args.join(" ")}: kitty @ sends ${key}=${JSON.stringify(value)}, muxbridge leaves it`,
          );
        }
        // And the frame itself: kitty reads the same bytes from muxbridge.
        const framed = encodeKittyMessage(ours, "0.26.5");
        assert.ok(framed.startsWith(PREFIX) && !framed.includes(KITTY_END));
      }
      // The backend's own request reaches that socket and reads the answer.
      const answered = await kittySocketRun(unixRequest, path, kittyMessage(["ls"])!, "0.26.5", {
        timeoutMs: 10_000,
        clock,
        shown: ["kitty", "@", "ls"],
      });
      assert.equal(answered?.stdout, "7\n");
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await Deno.remove(dir, { recursive: true });
    }
  },
});
