import assert from "node:assert/strict";
import { BACKENDS } from "../../backends/mod.ts";
import {
  type Config,
  configJsonSchema as configJsonSchemaOf,
  configPath,
  envLayer,
  LAYOUTS,
  mergeLayers,
  parseConfigText,
  stateDir,
} from "../../lib/config/config.ts";
import { fakeEnv } from "../fakes/fake_env.ts";
import { resolveConfig } from "../helpers/config.ts";

/** The config's JSON Schema with every backend's section, as `schema config` prints it. */
const configJsonSchema = () => configJsonSchemaOf(BACKENDS);

/** The values of the `backend` key. */
const BACKEND_CHOICES = ["auto", "none", ...BACKENDS.map((b) => b.name)];

const noEnv = fakeEnv();
const invalidConfig = { name: "MuxError", code: "invalid_config" };

/** The contract's table of keys every implementation has, with their defaults. */
const CONTRACT_DEFAULTS = {
  backend: "auto",
  layout: "main-vertical",
  main_pane_size: 60,
  opencode_bin: "opencode",
  close_grace_ms: 250,
  idle_close_delay_ms: 3000,
  min_pane_lifetime_ms: 3000,
  poll_interval_ms: 2000,
  close_on_exit: true,
} as const;

// ---------------------------------------------------------------- defaults

Deno.test("resolveConfig() gives the contract's defaults with no file, env or flags", () => {
  const config = resolveConfig({ env: noEnv });
  for (const [key, value] of Object.entries(CONTRACT_DEFAULTS)) {
    assert.equal(config[key as keyof Config], value, key);
  }
});

Deno.test("resolveConfig() gives the close retry delay and the survivor grace close_grace_ms's value by default", () => {
  const plain = resolveConfig({ env: noEnv });
  assert.equal(plain.close_retry_delay_ms, 250);
  assert.equal(plain.survivor_grace_ms, 250);
  const slow = resolveConfig({ env: noEnv, flags: { close_grace_ms: 1000 } });
  assert.equal(slow.close_retry_delay_ms, 1000);
  assert.equal(slow.survivor_grace_ms, 1000);
  // The retry pause never went below 100 ms, whatever the grace.
  const quick = resolveConfig({ env: noEnv, flags: { close_grace_ms: 0 } });
  assert.equal(quick.close_retry_delay_ms, 100);
  assert.equal(quick.survivor_grace_ms, 0);
});

Deno.test("resolveConfig() takes close_retry_delay_ms and survivor_grace_ms on their own", () => {
  const config = resolveConfig({
    env: noEnv,
    flags: { close_grace_ms: 1000, close_retry_delay_ms: 40, survivor_grace_ms: 5000 },
  });
  assert.equal(config.close_grace_ms, 1000);
  assert.equal(config.close_retry_delay_ms, 40);
  assert.equal(config.survivor_grace_ms, 5000);
});

Deno.test("resolveConfig() fills every backend section with its defaults", () => {
  const config = resolveConfig({ env: noEnv });
  assert.deepEqual(config.tmux, { bin: "tmux" });
  assert.deepEqual(config.zellij, { bin: "zellij" });
  assert.deepEqual(config.herdr, { transport: "auto" });
  assert.deepEqual(config.kitty, {});
  assert.deepEqual(config.cmux, { bin: "cmux" });
  assert.deepEqual(config.wezterm, { bin: "wezterm" });
  assert.deepEqual(config.provider, {});
  assert.equal(config.state_dir, undefined);
});

Deno.test("the backend choices are auto, none and the registry's backends; the layouts the contract's", () => {
  // The registry's list is pinned to the contract in tests/backends/registry_test.ts.
  assert.deepEqual(
    (configJsonSchema() as { properties: { backend: { enum: string[] } } }).properties.backend
      .enum,
    ["auto", "none", ...BACKENDS.map((b) => b.name)],
  );
  assert.deepEqual([...LAYOUTS], [
    "main-vertical",
    "main-horizontal",
    "tiled",
    "even-horizontal",
    "even-vertical",
  ]);
});

// ---------------------------------------------------------------- precedence

const FILE = { path: "/home/u/.config/muxbridge/config.json" };

Deno.test("resolveConfig() lets the file override the defaults", () => {
  const config = resolveConfig({
    env: noEnv,
    file: { ...FILE, data: { layout: "tiled", main_pane_size: 40, close_on_exit: false } },
  });
  assert.equal(config.layout, "tiled");
  assert.equal(config.main_pane_size, 40);
  assert.equal(config.close_on_exit, false);
  assert.equal(config.backend, "auto");
});

Deno.test("resolveConfig() lets the environment override the file", () => {
  const config = resolveConfig({
    env: fakeEnv({
      MUXBRIDGE_BACKEND: "zellij",
      MUXBRIDGE_OPENCODE_BIN: "/opt/oc/bin/opencode",
      MUXBRIDGE_STATE_DIR: "/var/state/mb",
    }),
    file: {
      ...FILE,
      data: { backend: "tmux", opencode_bin: "oc-file", state_dir: "/file/state", layout: "tiled" },
    },
  });
  assert.equal(config.backend, "zellij");
  assert.equal(config.opencode_bin, "/opt/oc/bin/opencode");
  assert.equal(config.state_dir, "/var/state/mb");
  assert.equal(config.layout, "tiled");
});

Deno.test("resolveConfig() ignores empty environment overrides", () => {
  const config = resolveConfig({
    env: fakeEnv({ MUXBRIDGE_BACKEND: "", MUXBRIDGE_OPENCODE_BIN: "" }),
    file: { ...FILE, data: { backend: "kitty" } },
  });
  assert.equal(config.backend, "kitty");
  assert.equal(config.opencode_bin, "opencode");
});

Deno.test("resolveConfig() lets flags override the environment", () => {
  const config = resolveConfig({
    env: fakeEnv({ MUXBRIDGE_BACKEND: "zellij" }),
    flags: { backend: "tmux", log_level: "debug" },
  });
  assert.equal(config.backend, "tmux");
  assert.equal(config.log_level, "debug");
});

Deno.test("resolveConfig() lets bridge.hello override flags", () => {
  const config = resolveConfig({
    env: fakeEnv({ MUXBRIDGE_BACKEND: "zellij", MUXBRIDGE_OPENCODE_BIN: "env-oc" }),
    file: { ...FILE, data: { backend: "kitty", poll_interval_ms: 500 } },
    flags: { backend: "tmux" },
    hello: { backend: "none", idle_close_delay_ms: 42 },
  });
  assert.equal(config.backend, "none");
  assert.equal(config.idle_close_delay_ms, 42);
  assert.equal(config.opencode_bin, "env-oc");
  assert.equal(config.poll_interval_ms, 500);
});

Deno.test("resolveConfig() merges a section key by key across layers", () => {
  const config = resolveConfig({
    env: noEnv,
    file: { ...FILE, data: { tmux: { socket_name: "work", bin: "/usr/local/bin/tmux" } } },
    flags: { tmux: { target: "%3" } },
  });
  assert.deepEqual(config.tmux, {
    bin: "/usr/local/bin/tmux",
    socket_name: "work",
    target: "%3",
  });
});

Deno.test("resolveConfig() lets a later layer replace one key of a section", () => {
  const config = resolveConfig({
    env: noEnv,
    file: { ...FILE, data: { herdr: { session: "a", socket_path: "/s", transport: "cli" } } },
    hello: { herdr: { transport: "socket" } },
  });
  assert.deepEqual(config.herdr, { session: "a", socket_path: "/s", transport: "socket" });
});

Deno.test("mergeLayers() skips undefined values", () => {
  assert.deepEqual(mergeLayers({ a: 1, b: 2 }, { a: undefined, b: 3 }), { a: 1, b: 3 });
});

Deno.test("envLayer() reads only the three contract variables", () => {
  assert.deepEqual(
    envLayer(fakeEnv({
      MUXBRIDGE_BACKEND: "tmux",
      MUXBRIDGE_OPENCODE_BIN: "oc",
      MUXBRIDGE_STATE_DIR: "/s",
      MUXBRIDGE_LAYOUT: "tiled",
    })),
    { backend: "tmux", opencode_bin: "oc", state_dir: "/s" },
  );
});

// ---------------------------------------------------------------- attention

Deno.test("resolveConfig() rings the bell by default, focuses nothing and runs no command", () => {
  const config = resolveConfig({ env: noEnv });
  assert.equal(config.attention_bell, true);
  assert.equal(config.attention_focus, false);
  assert.equal(config.attention_command, undefined);
});

Deno.test("resolveConfig() takes attention_command as argv from a file, never from bridge.hello", () => {
  const argv = ["notify-send", "OpenCode needs you"];
  const file = resolveConfig({ env: noEnv, file: { ...FILE, data: { attention_command: argv } } });
  assert.deepEqual(file.attention_command, argv);
  assert.throws(() => resolveConfig({ env: noEnv, hello: { attention_command: argv } }), {
    ...invalidConfig,
    message: /key "attention_command" names a program to run/,
  });
  // bridge.hello may still tune the bell and the focus.
  const hello = resolveConfig({
    env: noEnv,
    hello: { attention_bell: false, attention_focus: true },
  });
  assert.equal(hello.attention_bell, false);
  assert.equal(hello.attention_focus, true);
});

Deno.test("resolveConfig() refuses an attention_command that is no argv", () => {
  for (const bad of [[], [""], "notify-send", ["a\0b"], [1]]) {
    assert.throws(
      () => resolveConfig({ env: noEnv, file: { ...FILE, data: { attention_command: bad } } }),
      { ...invalidConfig, message: /attention_command/ },
      JSON.stringify(bad),
    );
  }
});

// ---------------------------------------------------------------- errors

Deno.test("resolveConfig() refuses an unknown top-level key, naming it and the file", () => {
  assert.throws(
    () => resolveConfig({ env: noEnv, file: { ...FILE, data: { backnd: "tmux" } } }),
    {
      ...invalidConfig,
      message:
        'Cannot use the config from "/home/u/.config/muxbridge/config.json": unknown key "backnd"',
    },
  );
});

Deno.test("resolveConfig() refuses an unknown nested key, naming its full path", () => {
  assert.throws(
    () => resolveConfig({ env: noEnv, file: { ...FILE, data: { tmux: { sockett: "x" } } } }),
    { ...invalidConfig, message: /unknown key "tmux\.sockett"/ },
  );
});

Deno.test("resolveConfig() drops a removed key with a warning naming it and the source", () => {
  const warnings: string[] = [];
  const config = resolveConfig({
    env: noEnv,
    file: { ...FILE, data: { tmux: { control_mode: true, socket_name: "work" } } },
    hello: { tmux: { control_mode: false } },
    warn: (message) => warnings.push(message),
  });
  assert.deepEqual(config.tmux, { bin: "tmux", socket_name: "work" });
  assert.equal(warnings.length, 2);
  assert.match(
    warnings[0],
    /^Ignoring the key "tmux\.control_mode" from "\/home\/u\/.+": .+delete it/,
  );
  assert.match(warnings[1], /from bridge\.hello/);
  const top: string[] = [];
  resolveConfig({
    env: noEnv,
    file: { ...FILE, data: { idle_confirmations: 2 } },
    warn: (m) => top.push(m),
  });
  assert.match(top.join(), /^Ignoring the key "idle_confirmations" from /);
  // Without a listener the key is still dropped, never an error.
  assert.equal(
    resolveConfig({ env: noEnv, hello: { tmux: { control_mode: true } } }).tmux.bin,
    "tmux",
  );
});

Deno.test("resolveConfig() refuses an unknown key in bridge.hello, naming the source", () => {
  assert.throws(
    () => resolveConfig({ env: noEnv, hello: { kitty: { listen: "unix:/x" } } }),
    {
      ...invalidConfig,
      message: /^Cannot use the config from bridge\.hello: unknown key "kitty\.listen"$/,
    },
  );
});

Deno.test("resolveConfig() refuses a bad value, naming the key and the file", () => {
  assert.throws(
    () => resolveConfig({ env: noEnv, file: { ...FILE, data: { main_pane_size: 95 } } }),
    {
      ...invalidConfig,
      message:
        'Cannot use the config from "/home/u/.config/muxbridge/config.json": key "main_pane_size": the most is 80',
    },
  );
});

Deno.test("resolveConfig() refuses a bad environment value, naming only that variable and its value", () => {
  assert.throws(
    () =>
      resolveConfig({
        env: fakeEnv({ MUXBRIDGE_BACKEND: "screen", MUXBRIDGE_STATE_DIR: "/tmp/state" }),
      }),
    {
      ...invalidConfig,
      message: `Cannot use MUXBRIDGE_BACKEND "screen": choose one of ${BACKEND_CHOICES.join(", ")}`,
      hint: "Fix MUXBRIDGE_BACKEND or unset it",
    },
  );
});

Deno.test("resolveConfig() refuses a bad hello value, naming the key and bridge.hello", () => {
  assert.throws(
    () => resolveConfig({ env: noEnv, hello: { close_grace_ms: -1 } }),
    {
      ...invalidConfig,
      message: /^Cannot use the config from bridge\.hello: key "close_grace_ms": /,
    },
  );
  assert.throws(
    () => resolveConfig({ env: noEnv, hello: { tmux: { bin: "" } } }),
    { ...invalidConfig, message: /bridge\.hello: key "tmux\.bin"/ },
  );
});

Deno.test("resolveConfig() refuses a socket or session name that could leave its directory, naming the key, from the file and the flags", () => {
  const bad: Array<[string, string]> = [
    ["../evil/s", 'it holds "/"'],
    ["a/b", 'it holds "/"'],
    ["..", 'it holds ".."'],
    ["a..b", 'it holds ".."'],
    [".hidden", 'it starts with "."'],
    ["-L", 'it starts with "-"'],
    ["with space", "it holds a character other than"],
    ["x".repeat(65), "it is longer than 64 characters"],
  ];
  for (const key of ["tmux.socket_name", "zellij.session", "herdr.session"]) {
    const [section, name] = key.split(".");
    for (const [value, problem] of bad) {
      const data = { [section]: { [name]: value } };
      for (const sources of [{ file: { ...FILE, data } }, { flags: data }]) {
        assert.throws(() => resolveConfig({ env: noEnv, ...sources }), {
          ...invalidConfig,
          message: new RegExp(
            `key "${key.replace(".", "\\.")}": ${problem.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`,
          ),
        }, `${key} ${value}`);
      }
    }
  }
  const config = resolveConfig({
    env: noEnv,
    file: {
      ...FILE,
      data: {
        tmux: { socket_name: "work_2.x" },
        zellij: { session: "crunchy-tomato" },
        herdr: { session: "_x" },
      },
    },
  });
  assert.equal(config.tmux.socket_name, "work_2.x");
  assert.equal(config.zellij.session, "crunchy-tomato");
  assert.equal(config.herdr.session, "_x");
});

Deno.test("resolveConfig() refuses a bridge.hello choosing a socket, a server or a session, naming the key and why", () => {
  const cases: Array<[Record<string, unknown>, string, RegExp]> = [
    [{ tmux: { socket_name: "work" } }, "tmux.socket_name", /names a socket/],
    [{ tmux: { socket_path: "/tmp/s" } }, "tmux.socket_path", /names a socket/],
    [{ tmux: { target: "t:0" } }, "tmux.target", /chooses the multiplexer session/],
    [{ zellij: { session: "work" } }, "zellij.session", /chooses the multiplexer session/],
    [{ herdr: { session: "work" } }, "herdr.session", /chooses the multiplexer session/],
    [{ cmux: { socket_path: "/tmp/s" } }, "cmux.socket_path", /names a socket/],
    [{ zellij: { bin: "/tmp/z" } }, "zellij.bin", /names a program/],
  ];
  for (const [hello, key, why] of cases) {
    assert.throws(() => resolveConfig({ env: noEnv, hello }), (err: unknown) => {
      const e = err as { code?: string; message: string; hint?: string };
      assert.equal(e.code, "invalid_config");
      assert.match(
        e.message,
        new RegExp(`^Cannot use the config from bridge\\.hello: key "${key.replace(".", "\\.")}" `),
      );
      assert.match(e.message, why);
      assert.match(e.hint ?? "", /config file or the environment/);
      return true;
    }, key);
  }
  // A hello that only tunes how panes behave still applies.
  assert.equal(
    resolveConfig({ env: noEnv, hello: { herdr: { transport: "cli" } } }).herdr.transport,
    "cli",
  );
});

Deno.test("resolveConfig() refuses bad flags, naming the command line", () => {
  assert.throws(
    () => resolveConfig({ env: noEnv, flags: { log_level: "trace" } }),
    { ...invalidConfig, message: /the command line: key "log_level"/ },
  );
});

Deno.test("resolveConfig() refuses wrong types and fractions", () => {
  for (
    const data of [
      { close_on_exit: "yes" },
      { poll_interval_ms: 1.5 },
      { poll_interval_ms: 99 },
      { idle_close_delay_ms: "3000" },
      { layout: "grid" },
      { tmux: "tmux" },
      { opencode_bin: "" },
    ]
  ) {
    assert.throws(
      () => resolveConfig({ env: noEnv, file: { ...FILE, data } }),
      invalidConfig,
      JSON.stringify(data),
    );
  }
});

Deno.test("resolveConfig() refuses max_panes below 1 (0 would queue every child for ever), and takes 1", () => {
  for (const max_panes of [0, -1, 1.5]) {
    assert.throws(
      () => resolveConfig({ env: noEnv, file: { ...FILE, data: { max_panes } } }),
      { ...invalidConfig, message: /key "max_panes"/ },
      String(max_panes),
    );
    assert.throws(
      () => resolveConfig({ env: noEnv, hello: { max_panes } }),
      { ...invalidConfig, message: /bridge\.hello: key "max_panes"/ },
      String(max_panes),
    );
  }
  assert.equal(
    resolveConfig({ env: noEnv, file: { ...FILE, data: { max_panes: 1 } } }).max_panes,
    1,
  );
  assert.equal(resolveConfig({ env: noEnv }).max_panes, undefined, "no limit by default");
});

Deno.test("resolveConfig() refuses a file that is not a JSON object", () => {
  for (const data of [null, [], "tmux", 3, true]) {
    assert.throws(
      () => resolveConfig({ env: noEnv, file: { ...FILE, data } }),
      { ...invalidConfig, message: /key "\(root\)"/ },
      JSON.stringify(data),
    );
  }
});

Deno.test("resolveConfig() refuses prototype keys instead of merging them", () => {
  const data = JSON.parse('{"__proto__":{"backend":"tmux"},"tmux":{"__proto__":{"bin":"x"}}}');
  assert.throws(() => resolveConfig({ env: noEnv, file: { ...FILE, data } }), (err: Error) => {
    assert.match(err.message, /unknown key "__proto__"/);
    assert.match(err.message, /unknown key "tmux\.__proto__"/);
    return true;
  });
});

Deno.test("resolveConfig() errors carry a hint pointing at schema config", () => {
  assert.throws(
    () => resolveConfig({ env: noEnv, hello: { nope: 1 } }),
    (err: Error & { hint?: string }) => /schema config/.test(err.hint ?? ""),
  );
});

Deno.test("parseConfigText() parses JSON", () => {
  assert.deepEqual(parseConfigText("/c.json", '{"backend":"tmux"}'), { backend: "tmux" });
});

Deno.test("parseConfigText() turns invalid JSON into invalid_config naming the file", () => {
  for (const text of ["", "{", "{backend: 'tmux'}", '{"a":1,}', "// comment\n{}"]) {
    assert.throws(() => parseConfigText("/etc/mb.json", text), {
      ...invalidConfig,
      message: /^Cannot read config file "\/etc\/mb\.json": not valid JSON/,
    }, text);
  }
});

// ---------------------------------------------------------------- paths

Deno.test("configPath() prefers --config, named explicitly", () => {
  assert.deepEqual(
    configPath(
      "/x.json",
      fakeEnv({ MUXBRIDGE_CONFIG: "/y.json", XDG_CONFIG_HOME: "/xdg", HOME: "/h" }),
    ),
    { path: "/x.json", explicit: true },
  );
});

Deno.test("configPath() then takes $MUXBRIDGE_CONFIG, named explicitly", () => {
  assert.deepEqual(
    configPath(
      undefined,
      fakeEnv({ MUXBRIDGE_CONFIG: "/y.json", XDG_CONFIG_HOME: "/xdg", HOME: "/h" }),
    ),
    { path: "/y.json", explicit: true },
  );
});

Deno.test("configPath() then takes $XDG_CONFIG_HOME/muxbridge/config.json, not explicit", () => {
  assert.deepEqual(configPath(undefined, fakeEnv({ XDG_CONFIG_HOME: "/xdg", HOME: "/h" })), {
    path: "/xdg/muxbridge/config.json",
    explicit: false,
  });
});

Deno.test("configPath() then takes ~/.config/muxbridge/config.json, not explicit", () => {
  assert.deepEqual(configPath(undefined, fakeEnv({ HOME: "/h" })), {
    path: "/h/.config/muxbridge/config.json",
    explicit: false,
  });
});

Deno.test("configPath() has no path without HOME", () => {
  assert.equal(configPath(undefined, noEnv), null);
});

Deno.test("stateDir() prefers state_dir, then XDG_STATE_HOME, then ~/.local/state", () => {
  const base = resolveConfig({ env: noEnv });
  assert.equal(
    stateDir(
      resolveConfig({ env: fakeEnv({ MUXBRIDGE_STATE_DIR: "/mb" }) }),
      fakeEnv({ XDG_STATE_HOME: "/xs" }),
    ),
    "/mb",
  );
  assert.equal(stateDir(base, fakeEnv({ XDG_STATE_HOME: "/xs", HOME: "/h" })), "/xs/muxbridge");
  assert.equal(stateDir(base, fakeEnv({ HOME: "/h" })), "/h/.local/state/muxbridge");
});

// ---------------------------------------------------------------- JSON Schema

type JsonSchema = {
  type?: string;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: unknown;
  default?: unknown;
  enum?: unknown[];
};

Deno.test("configJsonSchema() forbids unknown keys at the top and in every section", () => {
  const schema = configJsonSchema() as JsonSchema;
  assert.equal(schema.type, "object");
  assert.equal(schema.additionalProperties, false);
  for (const section of ["tmux", "zellij", "herdr", "kitty", "cmux"]) {
    const s = schema.properties?.[section];
    assert.ok(s, section);
    assert.equal(s.additionalProperties, false, section);
  }
});

Deno.test("configJsonSchema() lists every contract key with its default", () => {
  const schema = configJsonSchema() as JsonSchema;
  for (const [key, value] of Object.entries(CONTRACT_DEFAULTS)) {
    assert.ok(schema.properties?.[key], `schema has ${key}`);
    assert.deepEqual(schema.properties[key].default, value, key);
  }
  assert.deepEqual(schema.properties?.backend.enum, [...BACKEND_CHOICES]);
  assert.deepEqual(schema.properties?.layout.enum, [...LAYOUTS]);
});

Deno.test("configJsonSchema() is plain JSON", () => {
  const schema = configJsonSchema();
  assert.deepEqual(JSON.parse(JSON.stringify(schema)), schema);
});
