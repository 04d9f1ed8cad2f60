/**
 * A backend is handed checked ids only: a `SessionId` in its spawn request and a `PaneId` for
 * every pane, each made where the input entered (a protocol line, a CLI flag, a pane record), so
 * no backend checks a session id again. These are type checks: `deno test` type-checks this
 * file, and each `@ts-expect-error` fails the check if the line it marks ever compiles.
 */

import assert from "node:assert/strict";
import type { Backend, SpawnRequest } from "../../lib/backend/backend.ts";
import { type PaneId, validatePaneId, validateSessionId } from "../../lib/sys/validate.ts";

Deno.test("a backend's inputs take checked ids only, and no literal carries the brand", () => {
  // Never called: it exists for the type checker.
  const typeChecks = (backend: Backend, req: SpawnRequest): PaneId => {
    // @ts-expect-error: a session id is checked where it enters, not handed in as text
    void backend.spawn({ ...req, sessionId: "ses_x;kill" });
    // @ts-expect-error: a pane id is checked where it enters, not handed in as text
    void backend.kill("-t");
    // @ts-expect-error: layout panes are checked ids too
    void backend.applyLayout({ layout: "tiled", mainPaneSize: 60, panes: ["%1"] });
    // @ts-expect-error: the brand is a type-only symbol, so no object literal can carry it
    const forged: PaneId = Object.assign("%1", { checked: "PaneId" });
    void backend.spawn({ ...req, sessionId: validateSessionId("ses_ok") });
    void backend.kill(validatePaneId("%1"));
    return forged;
  };
  assert.equal(typeof typeChecks, "function");
});
