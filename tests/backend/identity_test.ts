import assert from "node:assert/strict";
import { BACKENDS } from "../../backends/mod.ts";
import { detectIdentity, precedence } from "../../lib/backend/identity.ts";
import { fakeEnv } from "../fakes/fake_env.ts";

/** Detection with every backend of the registry, as muxbridge detects. */
const detect = (vars: Record<string, string>) => detectIdentity(fakeEnv(vars), BACKENDS);

// Values as each backend's document under docs/backends/ records them.
const TMUX = { TMUX: "/tmp/tmux-0/default,10615,0", TMUX_PANE: "%0" };
const ZELLIJ = { ZELLIJ: "0", ZELLIJ_SESSION_NAME: "main", ZELLIJ_PANE_ID: "3" };
const HERDR = {
  HERDR_ENV: "1",
  HERDR_PANE_ID: "w1:p3",
  HERDR_SOCKET_PATH: "/run/user/1000/herdr/api.sock",
  HERDR_BIN_PATH: "/opt/herdr/bin/herdr",
  HERDR_WORKSPACE_ID: "w1",
  HERDR_TAB_ID: "w1:t3",
};
const KITTY = { KITTY_WINDOW_ID: "4", KITTY_PID: "2211", KITTY_LISTEN_ON: "unix:/tmp/kitty-2211" };
const WEZTERM = { WEZTERM_PANE: "3", WEZTERM_UNIX_SOCKET: "/run/user/1000/wezterm/gui-sock-42" };
const CMUX = {
  CMUX_SOCKET_PATH: "/tmp/cmux.sock",
  CMUX_WORKSPACE_ID: "6F1C9E0A-1111-4222-8333-444455556666",
  CMUX_SURFACE_ID: "0B0E5D7C-AAAA-4BBB-8CCC-DDDDEEEEFFFF",
};

Deno.test("detectIdentity() finds nothing in an empty environment", () => {
  assert.deepEqual(detect({}), { backend: null, layers: [], harness: { name: null } });
});

Deno.test("detectIdentity() reads tmux's socket, server pid and pane", () => {
  assert.deepEqual(detect(TMUX), {
    backend: "tmux",
    layers: [{ backend: "tmux", paneId: "%0", socket: "/tmp/tmux-0/default", pid: 10615 }],
    harness: { name: null },
  });
});

Deno.test("detectIdentity() keeps a tmux socket path that holds commas", () => {
  const id = detect({ TMUX: "/tmp/a,b/default,42,1", TMUX_PANE: "%7" });
  assert.deepEqual(id.layers[0], {
    backend: "tmux",
    paneId: "%7",
    socket: "/tmp/a,b/default",
    pid: 42,
  });
});

Deno.test("detectIdentity() reports tmux without TMUX_PANE as a layer with no pane", () => {
  assert.deepEqual(detect({ TMUX: "/tmp/tmux-0/default,10615,0" }).layers[0].paneId, null);
});

Deno.test("detectIdentity() ignores an empty TMUX", () => {
  assert.equal(detect({ TMUX: "", TMUX_PANE: "%0" }).backend, null);
});

Deno.test("detectIdentity() turns zellij's bare pane number into terminal_N", () => {
  assert.deepEqual(detect(ZELLIJ).layers, [{
    backend: "zellij",
    paneId: "terminal_3",
    session: "main",
  }]);
});

Deno.test("detectIdentity() detects zellij from ZELLIJ=0 alone", () => {
  assert.deepEqual(detect({ ZELLIJ: "0" }).layers, [{ backend: "zellij", paneId: null }]);
});

Deno.test("detectIdentity() keeps a zellij pane id that already has its kind", () => {
  assert.equal(detect({ ZELLIJ: "0", ZELLIJ_PANE_ID: "plugin_2" }).layers[0].paneId, "plugin_2");
});

Deno.test("detectIdentity() reads zellij's socket directory", () => {
  assert.equal(
    detect({ ...ZELLIJ, ZELLIJ_SOCKET_DIR: "/tmp/zj" }).layers[0].socket,
    "/tmp/zj",
  );
});

Deno.test("detectIdentity() reads every herdr variable", () => {
  assert.deepEqual(detect({ ...HERDR, HERDR_SESSION: "work" }), {
    backend: "herdr",
    layers: [{
      backend: "herdr",
      paneId: "w1:p3",
      socket: "/run/user/1000/herdr/api.sock",
      session: "work",
      workspaceId: "w1",
      tabId: "w1:t3",
      binPath: "/opt/herdr/bin/herdr",
    }],
    harness: { name: null },
  });
});

Deno.test("detectIdentity() detects herdr from HERDR_ENV=1 without a pane (a popup)", () => {
  assert.deepEqual(detect({ HERDR_ENV: "1" }).layers, [{ backend: "herdr", paneId: null }]);
});

Deno.test("detectIdentity() detects herdr from HERDR_PANE_ID alone", () => {
  assert.equal(detect({ HERDR_PANE_ID: "w2:p1" }).layers[0].paneId, "w2:p1");
});

Deno.test("detectIdentity() ignores HERDR_ENV other than 1 without a pane", () => {
  assert.equal(detect({ HERDR_ENV: "0" }).backend, null);
});

Deno.test("detectIdentity() reads kitty's window, pid and listen address", () => {
  assert.deepEqual(detect(KITTY).layers, [{
    backend: "kitty",
    paneId: "4",
    socket: "unix:/tmp/kitty-2211",
    pid: 2211,
  }]);
});

Deno.test("detectIdentity() needs a kitty window or pid, not only KITTY_LISTEN_ON", () => {
  assert.equal(detect({ KITTY_LISTEN_ON: "unix:/tmp/k" }).backend, null);
  assert.deepEqual(detect({ KITTY_PID: "9" }).layers, [{ backend: "kitty", paneId: null, pid: 9 }]);
});

Deno.test("detectIdentity() leaves out a kitty pid that is not a number", () => {
  assert.deepEqual(detect({ KITTY_WINDOW_ID: "1", KITTY_PID: "12x" }).layers, [{
    backend: "kitty",
    paneId: "1",
  }]);
});

Deno.test("detectIdentity() reads cmux when all three variables are set", () => {
  assert.deepEqual(detect(CMUX).layers, [{
    backend: "cmux",
    paneId: CMUX.CMUX_SURFACE_ID,
    socket: "/tmp/cmux.sock",
    workspaceId: CMUX.CMUX_WORKSPACE_ID,
  }]);
});

Deno.test("detectIdentity() finds no cmux layer from two of its three variables", () => {
  const names = Object.keys(CMUX) as Array<keyof typeof CMUX>;
  for (const missing of names) {
    const vars: Record<string, string> = { ...CMUX };
    delete vars[missing];
    assert.deepEqual(detect(vars).layers, [], `without ${missing}`);
    assert.deepEqual(detect({ ...vars, [missing]: "" }).layers, [], `with ${missing} empty`);
  }
});

Deno.test("detectIdentity() picks tmux inside kitty and lists both, innermost first", () => {
  const id = detect({ ...TMUX, ...KITTY });
  assert.equal(id.backend, "tmux");
  assert.deepEqual(id.layers.map((l) => l.backend), ["tmux", "kitty"]);
});

Deno.test("detectIdentity() picks zellij over herdr", () => {
  const id = detect({ ...ZELLIJ, ...HERDR });
  assert.equal(id.backend, "zellij");
  assert.deepEqual(id.layers.map((l) => l.backend), ["zellij", "herdr"]);
});

Deno.test("detectIdentity() orders every layer tmux > zellij > herdr > cmux > kitty > wezterm", () => {
  const id = detect({ ...WEZTERM, ...KITTY, ...CMUX, ...HERDR, ...ZELLIJ, ...TMUX });
  assert.deepEqual(id.layers.map((l) => l.backend), [
    "tmux",
    "zellij",
    "herdr",
    "cmux",
    "kitty",
    "wezterm",
  ]);
  // Every backend but the provider, which only the config chooses.
  assert.deepEqual(
    [...precedence(BACKENDS)].sort(),
    BACKENDS.map((b) => b.name).filter((n) => n !== "provider").sort(),
  );
});

Deno.test("detectIdentity() reads WezTerm from WEZTERM_PANE and WEZTERM_UNIX_SOCKET", () => {
  assert.deepEqual(detect(WEZTERM).layers, [
    { backend: "wezterm", paneId: "3", socket: "/run/user/1000/wezterm/gui-sock-42" },
  ]);
  assert.deepEqual(detect({ WEZTERM_UNIX_SOCKET: "/s" }).layers, [
    { backend: "wezterm", paneId: null, socket: "/s" },
  ]);
  assert.equal(detect({ WEZTERM_PANE: "x" }).layers[0].paneId, null, "a pane id is a number");
  assert.equal(detect({ WEZTERM_PANE: "" }).backend, null);
});

Deno.test("detectIdentity() lets a multiplexer inside WezTerm win over it, as over kitty", () => {
  assert.equal(detect({ ...WEZTERM, ...TMUX }).backend, "tmux");
  assert.deepEqual(detect({ ...WEZTERM, ...TMUX }).layers.map((l) => l.backend), [
    "tmux",
    "wezterm",
  ]);
});

Deno.test("detectIdentity() recognises Claude Code with its session id and pid", () => {
  assert.deepEqual(
    detect({ CLAUDE_CODE_SESSION_ID: "0b1c2d3e-0000-4000-8000-000000000001", CLAUDE_PID: "777" })
      .harness,
    { name: "claude-code", sessionId: "0b1c2d3e-0000-4000-8000-000000000001", pid: 777 },
  );
});

Deno.test("detectIdentity() recognises Claude Code from CLAUDECODE=1", () => {
  assert.deepEqual(detect({ CLAUDECODE: "1" }).harness, { name: "claude-code" });
});

Deno.test("detectIdentity() does not take CLAUDE_PID alone for Claude Code", () => {
  assert.deepEqual(detect({ CLAUDE_PID: "777" }).harness, { name: null });
});

Deno.test("detectIdentity() recognises OpenCode from OPENCODE", () => {
  assert.deepEqual(detect({ OPENCODE: "1" }).harness, { name: "opencode" });
  assert.deepEqual(
    detect({ OPENCODE: "1", OPENCODE_PID: "31", OPENCODE_SESSION_ID: "ses_a" }).harness,
    {
      name: "opencode",
      sessionId: "ses_a",
      pid: 31,
    },
  );
});

Deno.test("detectIdentity() reads the harness next to the layers", () => {
  const id = detect({ ...TMUX, OPENCODE: "1" });
  assert.equal(id.backend, "tmux");
  assert.equal(id.harness.name, "opencode");
});
