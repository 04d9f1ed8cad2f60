/**
 * The 2.x service's password from its own private state file: only for the origin it names,
 * only from a private file of this user, and followed across a restart.
 */

import assert from "node:assert/strict";
import { chmodSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  readServices,
  ServiceCredentials,
  serviceCredentials,
} from "../../lib/opencode/v2/service.ts";
import { findCredentials } from "../../lib/opencode/credentials.ts";

function dirWith(files: Record<string, unknown>, mode = 0o600): string {
  const dir = Deno.makeTempDirSync({ prefix: "muxbridge-service-" });
  for (const [name, body] of Object.entries(files)) {
    const path = join(dir, name);
    writeFileSync(path, typeof body === "string" ? body : JSON.stringify(body), { mode });
    chmodSync(path, mode);
  }
  return dir;
}

const record = (port: number, password: string) => ({
  id: "f2029f36",
  version: "2.1.2",
  url: `http://127.0.0.1:${port}`,
  pid: 4709,
  password,
});

Deno.test("serviceCredentials() gives the password of the service whose origin the URL names", () => {
  const dir = dirWith({
    "service.json": record(49374, "latest-pw"),
    "service-beta.json": record(49375, "beta-pw"),
  });
  try {
    assert.deepEqual(serviceCredentials("http://127.0.0.1:49374", dir), {
      username: "opencode",
      password: "latest-pw",
    });
    assert.equal(serviceCredentials("http://127.0.0.1:49375/", dir)?.password, "beta-pw");
    assert.equal(serviceCredentials("http://127.0.0.1:4096", dir), undefined);
    // The scheme is part of the origin: an https URL is another server.
    assert.equal(serviceCredentials("https://127.0.0.1:49374", dir), undefined);
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("a service file others can read, a link, or one that is not a record gives nothing", () => {
  const open = dirWith({ "service.json": record(49374, "pw") }, 0o644);
  const why: string[] = [];
  try {
    assert.equal(
      serviceCredentials("http://127.0.0.1:49374", open, (_f, w) => why.push(w)),
      undefined,
    );
    assert.match(why.join(";"), /other users can access it/);
  } finally {
    Deno.removeSync(open, { recursive: true });
  }
  const linked = dirWith({ "real.json": record(49374, "pw") });
  try {
    symlinkSync(join(linked, "real.json"), join(linked, "service.json"));
    assert.equal(serviceCredentials("http://127.0.0.1:49374", linked), undefined);
  } finally {
    Deno.removeSync(linked, { recursive: true });
  }
  const junk = dirWith({ "service.json": "{not json", "service-x.json": { url: 3 } });
  try {
    const skipped: string[] = [];
    assert.deepEqual(readServices(junk, (_f, w) => skipped.push(w)), []);
    assert.deepEqual(skipped.sort(), ["it is not JSON", "it is not a service record"]);
  } finally {
    Deno.removeSync(junk, { recursive: true });
  }
});

Deno.test("ServiceCredentials follows a service that restarts with a new password", () => {
  const dir = dirWith({ "service.json": record(49374, "first") });
  try {
    const live = new ServiceCredentials("http://127.0.0.1:49374", dir);
    assert.equal(live.current()?.password, "first");
    const path = join(dir, "service.json");
    Deno.removeSync(path);
    writeFileSync(path, JSON.stringify({ ...record(49374, "second"), pid: 5000 }), {
      mode: 0o600,
    });
    assert.equal(live.current()?.password, "second");
    Deno.removeSync(path);
    assert.equal(live.current(), undefined, "a stopped service leaves no password");
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
});

Deno.test("findCredentials() takes 1.x's variables, then 2.x's, then the service file", () => {
  const state = Deno.makeTempDirSync({ prefix: "muxbridge-state-" });
  Deno.mkdirSync(join(state, "opencode"));
  writeFileSync(join(state, "opencode", "service.json"), JSON.stringify(record(49374, "svc")), {
    mode: 0o600,
  });
  try {
    const env = (vars: Record<string, string>) => (n: string) => vars[n];
    const url = "http://127.0.0.1:49374";
    assert.equal(
      findCredentials(url, env({ OPENCODE_SERVER_PASSWORD: "one", XDG_STATE_HOME: state }))
        ?.password,
      "one",
    );
    assert.equal(
      findCredentials(url, env({ OPENCODE_PASSWORD: "two", XDG_STATE_HOME: state }))?.password,
      "two",
    );
    assert.equal(findCredentials(url, env({ XDG_STATE_HOME: state }))?.password, "svc");
    assert.equal(findCredentials("http://127.0.0.1:1", env({ XDG_STATE_HOME: state })), undefined);
  } finally {
    Deno.removeSync(state, { recursive: true });
  }
});
