/**
 * Credentials go only to the origin they came with (`lib/opencode/origin.ts`): scheme, host and
 * port. The same host and port over the other scheme is another server as far as a password is
 * concerned (an `http://` listener on the port an `https://` server was named with sees the
 * password in clear).
 */

import assert from "node:assert/strict";
import { credentialsFor, grantFor, originOf } from "../../lib/opencode/origin.ts";

const AUTH = { username: "opencode", password: "pw" };

Deno.test("originOf() is scheme, host and port; a default port is left out; anything but http(s) has none", () => {
  assert.equal(originOf("http://127.0.0.1:4096/session?x=1"), "http://127.0.0.1:4096");
  assert.equal(originOf("https://127.0.0.1:4096/"), "https://127.0.0.1:4096");
  assert.notEqual(originOf("http://127.0.0.1:4096"), originOf("https://127.0.0.1:4096"));
  assert.equal(originOf("http://h:80/a"), originOf("http://h/b"));
  assert.equal(originOf("https://h:443"), originOf("https://h"));
  assert.notEqual(originOf("http://h:443"), originOf("https://h"));
  for (const bad of ["ftp://h/", "file:///tmp/x", "not a url", "", null, undefined]) {
    assert.equal(originOf(bad), null, String(bad));
  }
});

Deno.test("credentialsFor() gives the credentials to their own origin only: never over the other scheme on the same host and port", () => {
  const overHttps = grantFor("https://127.0.0.1:4096/", AUTH);
  assert.deepEqual(overHttps, { origin: "https://127.0.0.1:4096", auth: AUTH });
  assert.deepEqual(credentialsFor("https://127.0.0.1:4096/session/ses_1", overHttps), AUTH);
  assert.equal(credentialsFor("http://127.0.0.1:4096/session/ses_1", overHttps), undefined);

  const overHttp = grantFor("http://127.0.0.1:4096", AUTH);
  assert.deepEqual(credentialsFor("http://127.0.0.1:4096/", overHttp), AUTH);
  assert.equal(credentialsFor("https://127.0.0.1:4096/", overHttp), undefined);
  assert.equal(credentialsFor("http://127.0.0.1:4097/", overHttp), undefined, "another port");
  assert.equal(credentialsFor("http://localhost:4096/", overHttp), undefined, "another host");
  assert.equal(credentialsFor(null, overHttp), undefined);
  assert.equal(credentialsFor("http://127.0.0.1:4096/", undefined), undefined);
});

Deno.test("grantFor() grants nothing without credentials or without an http(s) URL", () => {
  assert.equal(grantFor("http://127.0.0.1:4096", undefined), undefined);
  assert.equal(grantFor("ftp://127.0.0.1:4096", AUTH), undefined);
  assert.equal(grantFor(undefined, AUTH), undefined);
});
