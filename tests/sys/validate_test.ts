import assert from "node:assert/strict";
import {
  agentOf,
  cleanTitle,
  hasUnsafeChars,
  MAX_TARGET,
  MAX_TITLE,
  normalizeServerUrl,
  validateDirectory,
  validateEnv,
  validatePaneId,
  validatePlainName,
  validateSessionId,
  validateTarget,
  validateText,
} from "../../lib/sys/validate.ts";

const invalidArgument = { name: "MuxError", code: "invalid_argument" };

// ---------------------------------------------------------------- session ids

Deno.test("validateSessionId() accepts ses_ followed by 1 to 128 letters or digits", () => {
  for (const id of ["ses_a", "ses_0", "ses_dd685941bffedK24NH8nUi9WA4", `ses_${"Z".repeat(128)}`]) {
    assert.equal(validateSessionId(id), id);
  }
});

Deno.test("validateSessionId() refuses 129 characters after the prefix", () => {
  assert.throws(() => validateSessionId(`ses_${"a".repeat(129)}`), invalidArgument);
});

Deno.test("validateSessionId() refuses ses_ alone", () => {
  assert.throws(() => validateSessionId("ses_"), invalidArgument);
});

Deno.test("validateSessionId() refuses unicode digits and letters", () => {
  for (const id of ["ses_١٢٣", "ses_１２", "ses_é", "ses_ａ", "ses_𝟙"]) {
    assert.throws(() => validateSessionId(id), invalidArgument, id);
  }
});

Deno.test("validateSessionId() refuses other prefixes, separators and surrounding text", () => {
  for (
    const id of [
      "",
      "SES_abc",
      "ses-abc",
      "abc",
      "ses_abc ",
      " ses_abc",
      "ses_abc\n",
      "ses_a_b",
      "ses_a-b",
      "ses_a/b",
      "ses_../x",
      "ses_a\0",
      "-ses_a",
    ]
  ) {
    assert.throws(() => validateSessionId(id), invalidArgument, JSON.stringify(id));
  }
});

Deno.test("validateSessionId() quotes a long bad id cut short with a hint", () => {
  assert.throws(() => validateSessionId(`bad${"x".repeat(500)}`), (err: Error) => {
    assert.match(err.message, /^Cannot use session id "badx+…"$/);
    assert.ok(err.message.length < 120);
    assert.match((err as Error & { hint: string }).hint, /ses_/);
    return true;
  });
});

// ---------------------------------------------------------------- targets

Deno.test("validatePlainName() accepts socket and session names and refuses anything that could name a path, naming what it was", () => {
  for (const name of ["default", "work_2", "crunchy-tomato", "a.b", "_x", "9", "x".repeat(64)]) {
    assert.equal(validatePlainName("zellij.session", name), name);
  }
  const bad: Array<[string, RegExp]> = [
    ["", /it is empty/],
    ["../evil/s", /it holds "\/"/],
    ["/tmp/s", /it holds "\/"/],
    ["..", /it holds "\.\."/],
    ["a..b", /it holds "\.\."/],
    [".", /it starts with "\."/],
    ["-L", /it starts with "-"/],
    ["a b", /a character other than/],
    ["a\nb", /a character other than/],
    ["é", /a character other than/],
    ["x".repeat(65), /longer than 64/],
  ];
  for (const [value, problem] of bad) {
    assert.throws(() => validatePlainName("ZELLIJ_SESSION_NAME", value), (err: unknown) => {
      const e = err as { code: string; message: string; hint: string };
      assert.equal(e.code, "invalid_argument");
      assert.match(e.message, /^Cannot use ZELLIJ_SESSION_NAME "/);
      assert.match(e.message, problem);
      assert.match(e.hint, /1-64 letters, digits/);
      return true;
    }, JSON.stringify(value));
  }
});

Deno.test("validateTarget() accepts every backend's pane id form", () => {
  for (const id of ["%0", "%123", "terminal_3", "plugin_1", "w1:p3", "42", "surface:3"]) {
    assert.equal(validateTarget("pane id", id), id);
  }
  assert.equal(validateTarget("pane id", "7f0c2a3e-1b2c-4d5e-8f90-123456789abc").length, 36);
});

Deno.test("validatePaneId() accepts every backend's pane id form", () => {
  for (
    const id of [
      "%0",
      "%123",
      "terminal_3",
      "w1:p3",
      "p_ab12",
      "1-1",
      "42",
      "7f0c2a3e-1b2c-4d5e-8f90-123456789abc",
    ]
  ) {
    assert.equal(validatePaneId(id), id);
  }
});

Deno.test("validatePaneId() refuses what no multiplexer's ids hold, before any backend is known", () => {
  for (const id of [";rm", "$(id)", "%1 %2", "a'b", "%1;kill", "~", "", "-5", "%1\n"]) {
    assert.throws(() => validatePaneId(id), { ...invalidArgument }, JSON.stringify(id));
  }
  assert.throws(() => validatePaneId(";rm"), {
    ...invalidArgument,
    message: 'Cannot use pane id ";rm": no multiplexer has such ids',
  });
});

Deno.test("normalizeServerUrl() and validateDirectory() name the flag a value came from", () => {
  assert.throws(() => normalizeServerUrl("notaurl", "--url"), {
    ...invalidArgument,
    message: 'Cannot use --url "notaurl": it is not a URL',
  });
  assert.throws(() => validateDirectory("rel", "--dir"), {
    ...invalidArgument,
    message: 'Cannot use --dir "rel": it is not absolute',
  });
});

Deno.test("validateTarget() refuses an empty value", () => {
  assert.throws(() => validateTarget("pane id", ""), { ...invalidArgument, message: /empty/ });
});

Deno.test("validateTarget() refuses a leading dash", () => {
  for (const v of ["-", "-t", "--", "--help", "-1"]) {
    assert.throws(() => validateTarget("pane id", v), {
      ...invalidArgument,
      message: /starts with "-"/,
    });
  }
});

Deno.test("validateTarget() allows a dash after the first character", () => {
  assert.equal(validateTarget("session", "my-session"), "my-session");
});

Deno.test("validateTarget() refuses control, format and line-separator characters", () => {
  for (
    const v of [
      "%1\n",
      "%1\r",
      "%1\t",
      "a\0b",
      "a\x1b]0;x\x07",
      "a\x7f",
      "a\u0085", // NEL, a C1 control
      "a\u009b", // CSI, a C1 control
      "a\u200b",
      "a\u200d",
      "a\u202e",
      "a\u2066",
      "a\ufeff",
      "a\u2028",
      "a\u2029",
      "a\ud800",
      "a\udc00b",
    ]
  ) {
    assert.throws(() => validateTarget("pane id", v), {
      ...invalidArgument,
      message: /control or format/,
    }, JSON.stringify(v));
  }
});

Deno.test("validateTarget() refuses more than 256 characters and names the kind", () => {
  assert.equal(validateTarget("socket", "s".repeat(MAX_TARGET)).length, 256);
  assert.throws(() => validateTarget("socket", "s".repeat(MAX_TARGET + 1)), {
    ...invalidArgument,
    message: /^Cannot use socket "s+…": it is longer than 256 characters$/,
  });
});

Deno.test("hasUnsafeChars() tells control and format characters from ordinary text", () => {
  assert.equal(hasUnsafeChars("plain 'quoted' $(text) 🙂 日本"), false);
  assert.equal(hasUnsafeChars("x\u200by"), true);
  assert.equal(hasUnsafeChars("x\u0007"), true);
});

// ---------------------------------------------------------------- text

Deno.test("validateText() accepts shell-looking text as plain text", () => {
  assert.equal(validateText("prompt", "$(rm -rf ~) 'x'"), "$(rm -rf ~) 'x'");
});

Deno.test("validateText() refuses control characters and a leading dash", () => {
  assert.throws(() => validateText("prompt", "line\nbreak"), invalidArgument);
  assert.throws(() => validateText("prompt", "\x03"), invalidArgument);
  assert.throws(() => validateText("prompt", "-x"), invalidArgument);
});

// ---------------------------------------------------------------- titles

Deno.test("cleanTitle() removes C0 and C1 controls and DEL", () => {
  assert.equal(cleanTitle("a\x00b\x07c\x08d\x1fe\x7ff\u0080g\u009fh"), "abcdefgh");
});

Deno.test("cleanTitle() removes the ESC byte of an escape sequence and keeps the rest", () => {
  assert.equal(cleanTitle("fix\x1b]0;pwned\x07 bug"), "fix]0;pwned bug");
  assert.equal(cleanTitle("\x1b[31mred\x1b[0m"), "[31mred[0m");
});

Deno.test("cleanTitle() removes zero-width, bidi and line-separator characters", () => {
  assert.equal(cleanTitle("a\u200bb\u202ec\u2028d\u2029e\u200df\ufeffg\u2066h"), "abcdefgh");
});

Deno.test("cleanTitle() removes tabs, newlines and carriage returns", () => {
  assert.equal(cleanTitle("one\ttwo\nthree\r\nfour"), "onetwothreefour");
});

Deno.test("cleanTitle() removes lone surrogates but keeps paired ones", () => {
  assert.equal(cleanTitle("a\ud800b\udc00c"), "abc");
  assert.equal(cleanTitle("smile 🙂"), "smile 🙂");
});

Deno.test("cleanTitle() keeps quotes and shell syntax as text", () => {
  const title = `it's "quoted" $(touch x) \`id\` ; rm -rf ~ | & < >`;
  assert.equal(cleanTitle(title), title);
});

Deno.test("cleanTitle() caps at 60 code points", () => {
  assert.equal(MAX_TITLE, 60);
  assert.equal(cleanTitle("x".repeat(61)), "x".repeat(60));
  assert.equal(cleanTitle("x".repeat(60)), "x".repeat(60));
  assert.equal(cleanTitle(""), "");
});

Deno.test("cleanTitle() counts an astral character as one and never splits it", () => {
  const title = "🙂".repeat(70);
  const clean = cleanTitle(title);
  assert.equal(Array.from(clean).length, 60);
  assert.equal(clean, "🙂".repeat(60));
  assert.equal(clean.length, 120); // UTF-16 units
  assert.equal(cleanTitle(`${"x".repeat(59)}🙂🙂`), `${"x".repeat(59)}🙂`);
});

Deno.test("cleanTitle() caps after removing, so removed characters do not count", () => {
  assert.equal(cleanTitle("\u200b".repeat(100) + "y".repeat(60)), "y".repeat(60));
});

// ---------------------------------------------------------------- server URLs

Deno.test("normalizeServerUrl() removes trailing slashes", () => {
  assert.deepEqual(normalizeServerUrl("http://127.0.0.1:4096/"), { url: "http://127.0.0.1:4096" });
  assert.deepEqual(normalizeServerUrl("http://127.0.0.1:4096"), { url: "http://127.0.0.1:4096" });
  assert.deepEqual(normalizeServerUrl("https://host/base///"), { url: "https://host/base" });
  assert.deepEqual(normalizeServerUrl("http://[::1]:4096/"), { url: "http://[::1]:4096" });
});

Deno.test("normalizeServerUrl() refuses a URL carrying credentials, without repeating them", () => {
  for (
    const raw of [
      "http://alice:s3cret@127.0.0.1:4096/",
      "http://a%40b:p%3Aw%2Fd@h:1/",
      "http://:s3cret@h:1",
      "http://s3cret@h:1",
      "http://user:100%zz@h:1/",
    ]
  ) {
    assert.throws(() => normalizeServerUrl(raw), (err: Error & { code: string; hint: string }) => {
      assert.equal(err.code, "invalid_argument");
      assert.match(err.message, /carries credentials/);
      assert.ok(!err.message.includes("s3cret") && !err.message.includes("100%zz"), err.message);
      assert.match(err.hint, /OPENCODE_SERVER_PASSWORD/);
      return true;
    }, raw);
  }
});

Deno.test("normalizeServerUrl() strips the query and the fragment", () => {
  assert.deepEqual(normalizeServerUrl("http://h:1/?directory=/x&token=t#frag"), {
    url: "http://h:1",
  });
});

Deno.test("normalizeServerUrl() refuses schemes other than http and https", () => {
  for (const raw of ["ftp://h/", "file:///etc/passwd", "javascript:alert(1)", "ws://h:1"]) {
    assert.throws(() => normalizeServerUrl(raw), { ...invalidArgument, message: /http/ }, raw);
  }
});

Deno.test("normalizeServerUrl() refuses text that is not a URL, with a hint", () => {
  for (const raw of ["", "127.0.0.1:4096x", "not a url", "http://"]) {
    assert.throws(() => normalizeServerUrl(raw), (err: Error & { code: string; hint: string }) => {
      assert.equal(err.code, "invalid_argument");
      assert.match(err.hint, /http:\/\/127\.0\.0\.1:4096/);
      return true;
    }, raw);
  }
});

// ---------------------------------------------------------------- directories

Deno.test("validateDirectory() accepts absolute paths, spaces and quotes included", () => {
  for (const d of ["/", "/tmp", "/home/u/my project", "/it's/$(x)", "C:\\Users\\u", "D:/x"]) {
    assert.equal(validateDirectory(d), d);
  }
});

Deno.test("validateDirectory() refuses relative and empty paths", () => {
  for (const d of ["", ".", "rel/dir", "./x", "~/x", "-rf", "C:relative"]) {
    assert.throws(() => validateDirectory(d), { ...invalidArgument, message: /not absolute/ }, d);
  }
});

Deno.test("validateDirectory() refuses control and format characters", () => {
  for (const d of ["/tmp/a\nb", "/tmp/\x1b]0;x\x07", "/tmp/\u202e", "/tmp/\u2028"]) {
    assert.throws(() => validateDirectory(d), {
      ...invalidArgument,
      message: /control or format/,
    });
  }
});

Deno.test("agentOf() takes the agent field, else the task title's suffix, cleaned and capped", () => {
  assert.equal(agentOf("Map the lib folder (@explore subagent)"), "explore");
  assert.equal(agentOf("x (@code-reviewer subagent)  "), "code-reviewer");
  assert.equal(agentOf("x (@explore subagent) more"), undefined, "only as the suffix");
  assert.equal(agentOf("plain"), undefined);
  assert.equal(agentOf("t (@a\u001b]0;x\u0007b subagent)"), "a]0;xb");
  assert.equal(agentOf("t", "  review\u0000\u202e "), "review");
  assert.equal(agentOf("t", "\u0007"), undefined, "empty once cleaned");
  assert.equal(agentOf("t", "x".repeat(500)), "x".repeat(64));
  assert.equal(agentOf("t (@explore subagent)", "build"), "build", "the field wins");
});

Deno.test("validateEnv() passes shell variable names with any value but NUL, and refuses reserved names", () => {
  validateEnv({ OPENCODE_SERVER_PASSWORD: "s3cret 'q' $(id) `x`", _A1: "" });
  const bads: Record<string, string>[] = [{ "A=B": "x" }, { "1A": "x" }, { "": "x" }, {
    A: "x\0y",
  }];
  for (const bad of bads) {
    assert.throws(() => validateEnv(bad), invalidArgument);
  }
  assert.throws(
    () => validateEnv({ HERDR_PANE_ID: "p" }, new Set(["HERDR_PANE_ID"])),
    invalidArgument,
  );
});
