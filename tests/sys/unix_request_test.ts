/**
 * The one-line Unix socket seam against real sockets in a temp directory: answers, the failures a
 * caller tells apart (never reached, reached and dropped, hung, too long) and the abort. Timeouts
 * run on the fake clock.
 */

import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { isMuxError } from "../../lib/sys/errors.ts";
import { unixRequest } from "../../lib/sys/unix_request.ts";
import { createFakeClock } from "../fakes/fake_clock.ts";
import { until } from "../helpers/until.ts";

/** A server whose connections `onLine` answers; returns it and its path. */
async function serve(
  dir: string,
  onLine: (line: string, socket: Socket) => void,
  endMarker = "\n",
): Promise<{ path: string; server: Server; seen: string[] }> {
  const path = `${dir}/s.sock`;
  const seen: string[] = [];
  const server = createServer((socket) => {
    let text = "";
    let answered = false;
    socket.on("data", (chunk) => {
      text += chunk.toString();
      const end = text.indexOf(endMarker);
      if (end >= 0 && !answered) {
        answered = true;
        seen.push(text);
        onLine(text.slice(0, end), socket);
      }
    });
    socket.on("error", () => {});
  });
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return { path, server, seen };
}

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "muxbridge-unix-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

const close = (server: Server) => new Promise<void>((resolve) => server.close(() => resolve()));

Deno.test("unixRequest() writes one line and returns the first answer line", async () => {
  await withDir(async (dir) => {
    const { path, server, seen } = await serve(dir, (line, socket) => {
      socket.write(`{"echo":${JSON.stringify(line)}}`);
      socket.end("\nsecond line\n");
    });
    try {
      const reply = await unixRequest(path, '{"id":"1"}', { timeoutMs: 5000 });
      assert.deepEqual(reply, { ok: true, line: '{"echo":"{\\"id\\":\\"1\\"}"}' });
      assert.deepEqual(seen, ['{"id":"1"}\n']);
    } finally {
      await close(server);
    }
  });
});

Deno.test("unixRequest() frames a message and its answer with another end marker", async () => {
  const END = "\x1b\\";
  await withDir(async (dir) => {
    // kitty's framing: the answer ends at the marker, not at a line break inside it.
    const { path, server, seen } = await serve(dir, (message, socket) => {
      socket.write(`\x1bP@answer{"data":"a\nb"}${END}trailing`);
      assert.equal(message, "\x1bP@cmd{}");
    }, END);
    try {
      const reply = await unixRequest(path, "\x1bP@cmd{}", { timeoutMs: 5000, end: END });
      assert.deepEqual(reply, { ok: true, line: '\x1bP@answer{"data":"a\nb"}' });
      assert.deepEqual(seen, [`\x1bP@cmd{}${END}`]);
      assert.throws(
        () => unixRequest(path, `x${END}y`, { timeoutMs: 5000, end: END }),
        /holding its end marker/,
      );
    } finally {
      await close(server);
    }
  });
});

Deno.test("unixRequest() without an answer resolves once the message is written", async () => {
  await withDir(async (dir) => {
    // The server never answers: only the written message is waited for, not the clock.
    const { path, server, seen } = await serve(dir, () => {});
    const clock = createFakeClock();
    try {
      const reply = await unixRequest(path, "fire", { timeoutMs: 5000, answer: false, clock });
      assert.deepEqual(reply, { ok: true, line: "" });
      await until("the server to read the message", () => seen.length === 1);
      assert.deepEqual(seen, ["fire\n"]);
    } finally {
      await close(server);
    }
  });
});

Deno.test("unixRequest() reports a missing socket and a refused one as unreachable, never sent", async () => {
  await withDir(async (dir) => {
    assert.deepEqual(await unixRequest(`${dir}/none.sock`, "x", { timeoutMs: 5000 }), {
      ok: false,
      reason: "unreachable",
      sent: false,
      detail: "ENOENT",
    });
    // A socket file nobody listens on: a server killed before it could remove it (the child
    // keeps an accept pending, else Deno would exit on its own and remove the file).
    const stale = `${dir}/stale.sock`;
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "eval",
        `const l = Deno.listen({ transport: "unix", path: ${
          JSON.stringify(stale)
        } }); console.log("up"); for await (const c of l) c.close();`,
      ],
      stdout: "piped",
    }).spawn();
    const reader = child.stdout.getReader();
    await reader.read();
    reader.releaseLock();
    child.kill("SIGKILL");
    await child.status;
    await child.stdout.cancel();
    const refused = await unixRequest(stale, "x", { timeoutMs: 5000 });
    assert.equal(refused.ok, false);
    assert.ok(!refused.ok && refused.reason === "unreachable" && !refused.sent);
    assert.ok(!refused.ok && refused.detail === "ECONNREFUSED", JSON.stringify(refused));
  });
});

Deno.test("unixRequest() tells a connection closed with half a line or nothing from an answer", async () => {
  await withDir(async (dir) => {
    let mode = "half";
    const { path, server } = await serve(dir, (_line, socket) => {
      if (mode === "half") socket.end('{"id":"1","res');
      else socket.destroy();
    });
    try {
      const half = await unixRequest(path, "x", { timeoutMs: 5000 });
      assert.ok(!half.ok && half.reason === "closed" && half.sent, JSON.stringify(half));
      assert.match(!half.ok ? half.detail : "", /only "\{\\"id\\":\\"1\\",\\"res"/);
      mode = "nothing";
      const none = await unixRequest(path, "x", { timeoutMs: 5000 });
      assert.ok(!none.ok && none.reason === "closed" && none.sent, JSON.stringify(none));
    } finally {
      await close(server);
    }
  });
});

Deno.test("unixRequest() gives up on the clock when no line comes, and on an endless line", async () => {
  await withDir(async (dir) => {
    const sockets: Socket[] = [];
    let mode = "hang";
    const { path, server } = await serve(dir, (_line, socket) => {
      sockets.push(socket);
      if (mode === "long") socket.write("x".repeat(5000));
    });
    try {
      const clock = createFakeClock();
      const pending = unixRequest(path, "x", { timeoutMs: 2000, clock });
      await clock.advance(1999);
      let settled = false;
      pending.finally(() => (settled = true));
      await clock.advance(0);
      assert.equal(settled, false);
      await clock.advance(1);
      const hung = await pending;
      assert.ok(!hung.ok && hung.reason === "timed_out" && hung.sent, JSON.stringify(hung));
      assert.equal(clock.pending(), 0);
      mode = "long";
      const long = await unixRequest(path, "x", { timeoutMs: 5000, maxBytes: 1000 });
      assert.ok(!long.ok && long.reason === "too_long", JSON.stringify(long));
    } finally {
      for (const s of sockets) s.destroy();
      await close(server);
    }
  });
});

Deno.test("unixRequest() rejects with interrupted on abort, and refuses a line break", async () => {
  await withDir(async (dir) => {
    const sockets: Socket[] = [];
    const { path, server } = await serve(dir, (_line, socket) => sockets.push(socket));
    try {
      const stop = new AbortController();
      const pending = unixRequest(path, "x", { timeoutMs: 5000, signal: stop.signal });
      stop.abort();
      await assert.rejects(pending, (e) => isMuxError(e, "interrupted"));
      await assert.rejects(
        unixRequest(path, "x", { timeoutMs: 5000, signal: AbortSignal.abort() }),
        (e) => isMuxError(e, "interrupted"),
      );
      assert.throws(() => unixRequest(path, "a\nb", { timeoutMs: 5000 }), TypeError);
      assert.throws(() => unixRequest(path, "a", { timeoutMs: 0 }), RangeError);
    } finally {
      for (const s of sockets) s.destroy();
      await close(server);
    }
  });
});
