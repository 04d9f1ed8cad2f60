import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createPaneStore,
  type PaneRecord,
  type PaneRecordInput,
} from "../../lib/session/pane_store.ts";

function withDir(fn: (dir: string) => void | Promise<void>): () => Promise<void> {
  return async () => {
    const dir = mkdtempSync(join(tmpdir(), "muxbridge-store-"));
    try {
      await fn(dir);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
}

function record(paneId: string, extra: Partial<PaneRecordInput> = {}): PaneRecordInput {
  return {
    sessionId: "ses_child1",
    paneId,
    backend: "tmux",
    title: "child",
    openedAt: "2026-08-30T12:00:00.000Z",
    owner: "4242:1795992218767",
    ...extra,
  };
}

const byPane = (a: PaneRecord, b: PaneRecord) => a.paneId.localeCompare(b.paneId);

Deno.test(
  "createPaneStore() lists nothing for a directory that does not exist yet",
  withDir((dir) => {
    const store = createPaneStore(join(dir, "state"));
    assert.deepEqual(store.list(), { records: [], corrupt: [] });
    assert.equal(store.dir, join(dir, "state"));
  }),
);

Deno.test(
  "PaneStore put(), list() and remove() round-trip a record",
  withDir((dir) => {
    const store = createPaneStore(dir);
    const full = record("%3", {
      server: "http://127.0.0.1:4096",
      directory: "/p",
      pid: 99,
      stuck: true,
      title: 'it\'s "odd" $(x) 🙂',
    });
    store.put(full);
    assert.deepEqual(store.list(), { records: [full], corrupt: [] });
    store.remove("tmux", "%3");
    assert.deepEqual(store.list(), { records: [], corrupt: [] });
  }),
);

Deno.test(
  "PaneStore put() replaces the record of the same pane",
  withDir((dir) => {
    const store = createPaneStore(dir);
    store.put(record("%3", { title: "old" }));
    store.put(record("%3", { title: "new" }));
    assert.deepEqual(store.list().records.map((r) => r.title), ["new"]);
  }),
);

Deno.test(
  "PaneStore keeps panes of different backends with the same id apart",
  withDir((dir) => {
    const store = createPaneStore(dir);
    store.put(record("3", { backend: "kitty" }));
    store.put(record("3", { backend: "zellij" }));
    assert.equal(store.list().records.length, 2);
    store.remove("kitty", "3");
    assert.deepEqual(store.list().records.map((r) => r.backend), ["zellij"]);
  }),
);

Deno.test(
  "PaneStore stores ids with %, :, / and other unsafe file-name characters",
  withDir((dir) => {
    const store = createPaneStore(dir);
    const ids = ["%0", "w1:p3", "a/b", "../../escape", "..", ".", "surface:1/2", "日本", "x y"];
    for (const id of ids) store.put(record(id, { backend: "herdr" }));
    assert.deepEqual(
      store.list().records.map((r) => r.paneId).sort(),
      [...ids].sort(),
    );
    // Every record is one plain file directly under <dir>/panes; nothing escaped it.
    const files = readdirSync(join(dir, "panes"));
    assert.equal(files.length, ids.length);
    for (const f of files) assert.match(f, /^herdr\.[A-Za-z0-9_-]*\.json$/);
    assert.deepEqual(readdirSync(dir), ["panes"]);
    for (const id of ids) store.remove("herdr", id);
    assert.deepEqual(store.list().records, []);
  }),
);

Deno.test(
  "PaneStore remove() of a missing record is fine",
  withDir((dir) => {
    const store = createPaneStore(dir);
    store.remove("tmux", "%9");
    store.put(record("%1"));
    store.remove("tmux", "%9");
    assert.equal(store.list().records.length, 1);
  }),
);

Deno.test(
  "PaneStore put() leaves no temporary file behind",
  withDir((dir) => {
    const store = createPaneStore(dir);
    for (let i = 0; i < 20; i++) store.put(record(`%${i % 5}`, { title: `t${i}` }));
    const files = readdirSync(join(dir, "panes"));
    assert.equal(files.length, 5);
    assert.ok(files.every((f) => f.endsWith(".json")), files.join(", "));
  }),
);

Deno.test(
  "PaneStore put() writes files only the user can read",
  withDir((dir) => {
    const store = createPaneStore(dir);
    store.put(record("%1"));
    const panes = join(dir, "panes");
    assert.equal(statSync(panes).mode & 0o777, 0o700);
    for (const f of readdirSync(panes)) assert.equal(statSync(join(panes, f)).mode & 0o077, 0);
  }),
);

Deno.test(
  "PaneStore list() skips a stale temporary file of a writer that died",
  withDir((dir) => {
    const store = createPaneStore(dir);
    store.put(record("%1"));
    writeFileSync(join(dir, "panes", "tmux.JTI.json.123.tmp"), '{"half":');
    assert.deepEqual(store.list(), { records: [record("%1")], corrupt: [] });
  }),
);

Deno.test(
  "PaneStore list() reports a corrupt file, moves it aside and still lists the others",
  withDir((dir) => {
    const store = createPaneStore(dir);
    store.put(record("%1"));
    store.put(record("%2"));
    const panes = join(dir, "panes");
    writeFileSync(join(panes, "tmux.broken.json"), '{"sessionId": "ses_x", ');
    const listing = store.list();
    assert.deepEqual(listing.records.sort(byPane), [record("%1"), record("%2")]);
    assert.deepEqual(listing.corrupt, [
      { file: join(panes, "tmux.broken.json"), reason: "not valid JSON" },
    ]);
    assert.ok(!existsSync(join(panes, "tmux.broken.json")));
    assert.equal(
      readFileSync(join(dir, "corrupt", "tmux.broken.json"), "utf8"),
      '{"sessionId": "ses_x", ',
    );
    // Moved aside: the next listing is clean.
    assert.deepEqual(store.list().corrupt, []);
  }),
);

Deno.test(
  "PaneStore list() reports a file of the wrong shape as not a pane record",
  withDir((dir) => {
    const store = createPaneStore(dir);
    store.put(record("%1"));
    const panes = join(dir, "panes");
    const wrong = {
      "tmux.array.json": "[]",
      "tmux.null.json": "null",
      "tmux.missing.json": JSON.stringify({ sessionId: "ses_a", paneId: "%5" }),
      "tmux.extra.json": JSON.stringify({ ...record("%6"), extra: true }),
      "tmux.backend.json": JSON.stringify({ ...record("%7"), backend: "-screen" }),
    };
    for (const [name, text] of Object.entries(wrong)) writeFileSync(join(panes, name), text);
    const listing = store.list();
    assert.deepEqual(listing.records, [record("%1")]);
    assert.deepEqual(
      listing.corrupt.map((c) => [c.file, c.reason]).sort(),
      Object.keys(wrong).map((n) => [join(panes, n), "not a pane record"]).sort(),
    );
    assert.deepEqual(readdirSync(join(dir, "corrupt")).sort(), Object.keys(wrong).sort());
  }),
);

Deno.test(
  "PaneStore list() ignores files that are not .json",
  withDir((dir) => {
    const store = createPaneStore(dir);
    mkdirSync(join(dir, "panes"), { recursive: true });
    writeFileSync(join(dir, "panes", "README"), "not a record");
    assert.deepEqual(store.list(), { records: [], corrupt: [] });
  }),
);

Deno.test(
  "two PaneStores on one directory see each other's records",
  withDir((dir) => {
    const a = createPaneStore(dir);
    const b = createPaneStore(dir);
    a.put(record("%1", { owner: "100:1" }));
    b.put(record("%2", { owner: "200:2" }));
    assert.deepEqual(a.list().records.sort(byPane).map((r) => r.owner), ["100:1", "200:2"]);
    assert.deepEqual(b.list().records.sort(byPane).map((r) => r.owner), ["100:1", "200:2"]);
    a.remove("tmux", "%2");
    assert.deepEqual(b.list().records.map((r) => r.paneId), ["%1"]);
  }),
);

// ---------------------------------------------------------------- status and failed exits

Deno.test(
  "PaneStore keeps a pane's live status and token, and refuses a malformed status",
  withDir((dir) => {
    const store = createPaneStore(dir);
    const token = "0123456789abcdef0123456789abcdef";
    const status = { state: "retry" as const, since: "2026-08-30T12:00:01.000Z", attempt: 2 };
    store.put(record("%7", { token, status }));
    assert.deepEqual(store.list().records[0].status, status);
    assert.equal(store.list().records[0].token, token);
    for (
      const bad of [
        { state: "sleeping", since: "2026-08-30T12:00:01.000Z" },
        { state: "busy", since: "yesterday" },
        { state: "failed", since: "2026-08-30T12:00:01.000Z", exitCode: 0 },
        { state: "busy", since: "2026-08-30T12:00:01.000Z", extra: 1 },
      ]
    ) {
      assert.throws(() => store.put(record("%8", { status: bad as never })));
    }
  }),
);

Deno.test(
  "PaneStore reads the failed exits pane programs reported, and forgets them",
  withDir((dir) => {
    const store = createPaneStore(dir);
    const a = "0123456789abcdef0123456789abcdef";
    const b = "fedcba9876543210fedcba9876543210";
    const fileA = store.exitFile(a);
    assert.equal(fileA, join(dir, "exits", a));
    assert.equal(statSync(join(dir, "exits")).mode & 0o777, 0o700);
    writeFileSync(fileA, "1\n", { mode: 0o600 });
    writeFileSync(store.exitFile(b), "garbage", { mode: 0o600 });
    // A start command's temporary file, and a name that is no token: left alone, not read.
    writeFileSync(`${fileA}.tmp`, "", { mode: 0o600 });
    writeFileSync(join(dir, "exits", "notes"), "9\n", { mode: 0o600 });
    assert.deepEqual(store.exits(), new Map([[a, 1]]));
    assert.equal(existsSync(store.exitFile(b)), false, "what no start command writes is removed");
    store.removeExit(a);
    store.removeExit(a);
    assert.deepEqual(store.exits(), new Map());
    assert.throws(() => store.exitFile("../x"), RangeError);
  }),
);

Deno.test(
  "PaneStore keeps the instance a pane opened on, and refuses a malformed one",
  withDir((dir) => {
    const store = createPaneStore(dir);
    const instance = {
      address: "/tmp/tmux-1000/default",
      pid: 4120,
      pidStart: "98765",
      startedAt: [1796617811, 1796617811] as [number, number],
    };
    store.put(record("%1", { instance }));
    assert.deepEqual(store.list().records[0].instance, instance);
    for (
      const bad of [
        { address: "" },
        { address: "s", pid: 0 },
        { address: "s", pidStart: "12a" },
        { address: "s", startedAt: [1] },
        { address: "s\nforged" },
        { address: "s", extra: 1 },
      ]
    ) {
      assert.throws(
        () => store.put(record("%2", { instance: bad as PaneRecordInput["instance"] })),
        JSON.stringify(bad),
      );
    }
  }),
);
