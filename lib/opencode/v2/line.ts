/**
 * OpenCode 2.x (npm `@opencode/cli`, verified on 2.1.2): one background service per user that
 * every TUI connects to, events shaped `{type, location, data}`, the routes `/api/info`,
 * `/api/session/active` and `/api/session/{id}` (Basic auth, user `opencode`), and panes that run
 * the TUI on the child: `opencode --server <url> --session <id> <dir>`, the password in
 * `OPENCODE_PASSWORD`. Its TUI takes a typed Ctrl+C on a child to the parent session instead of
 * exiting, so muxbridge interrupts it with SIGTERM. What each of these rests on is in
 * `docs/opencode.md`, "OpenCode 2.x".
 *
 * @module
 */

import { z } from "zod";
import type { Answer, Http } from "../_http.ts";
import type { LineClient, ServerHealth, ServerSession, SessionActivity } from "../client.ts";
import type { OpencodeLine, PaneProgram, PaneProgramInput } from "../line.ts";
import { decodeV2Event } from "./events.ts";
import { requestsOf } from "../pending.ts";

/** The variable that marks a TUI as running in one of muxbridge's panes (the plugin reads it). */
export const PANE_SESSION_VAR = "MUXBRIDGE_PANE_SESSION";

const InfoSchema = z.looseObject({ version: z.string() });
const ActiveSchema = z.looseObject({
  data: z.record(z.string(), z.looseObject({ type: z.string() })),
});
/** A 2.x list of pending requests (`{location, data: [...]}`; entries read by `requestsOf`). */
const PendingListSchema = z.looseObject({ data: z.array(z.unknown()) });
const SessionSchema = z.looseObject({
  data: z.looseObject({
    id: z.string(),
    parentID: z.string().nullish(),
    title: z.string().nullish(),
    location: z.looseObject({ directory: z.string().nullish() }).nullish(),
  }),
});

/** The path of 2.x's version route. */
export const V2_INFO = "/api/info";

/**
 * Reads 2.x's health (its version) from an answer of {@linkcode V2_INFO}.
 *
 * @param http The transport.
 * @param got The answer.
 * @returns The health.
 * @throws {MuxError} as {@linkcode Http.parse}.
 */
export function v2Health(http: Http, got: Answer): ServerHealth {
  return { healthy: true, version: http.parse(got, V2_INFO, InfoSchema).version };
}

/**
 * The 2.x routes on a transport. Sessions are not scoped by directory here: `/api/session/active`
 * covers every directory the service serves, and a session id is unique across them.
 *
 * @param http The transport.
 * @returns The routes.
 */
export function v2Client(http: Http): LineClient {
  return {
    async health(call) {
      return v2Health(http, await http.answer(V2_INFO, call));
    },
    async statusMap(call) {
      const active = await http.json("/api/session/active", ActiveSchema, call);
      const out = new Map<string, SessionActivity>();
      // Only running sessions are listed; the map does not say whether one is retrying.
      for (const id of Object.keys(active.data)) out.set(id, { status: "running" });
      return out;
    },
    async pendingRequests(call) {
      // Scoped like every location route: `location[directory]=` (a deepObject query).
      const scope = call?.directory
        ? `?${encodeURIComponent("location[directory]")}=${encodeURIComponent(call.directory)}`
        : "";
      const [permissions, forms] = await Promise.all(
        ["/api/permission/request", "/api/form"].map((path) =>
          http.json<{ data: unknown[] } | null>(
            `${path}${scope}`,
            PendingListSchema,
            call,
            () => null,
          )
        ),
      );
      if (permissions === null && forms === null) return null;
      return [
        ...requestsOf(permissions?.data ?? [], "permission"),
        ...requestsOf(forms?.data ?? [], "question"),
      ];
    },
    async session(id, call) {
      const s = await http.json<z.output<typeof SessionSchema> | null>(
        `/api/session/${encodeURIComponent(id)}`,
        SessionSchema,
        call,
        () => null,
      );
      if (s === null) return null;
      const { data } = s;
      return {
        id: data.id,
        ...(data.parentID ? { parentID: data.parentID } : {}),
        ...(data.title ? { title: data.title } : {}),
        ...(data.location?.directory ? { directory: data.location.directory } : {}),
      } satisfies ServerSession;
    },
  };
}

/**
 * The pane program: `<bin> --server <url> --session <id> <dir>`; the password in
 * `OPENCODE_PASSWORD`; {@linkcode PANE_SESSION_VAR} naming the child, so that muxbridge's own
 * plugin in that TUI starts no bridge and keeps the view on the child; and, when muxbridge sets
 * the pane's title, the TUI's own title switched off for this process only
 * (`OPENCODE_CLI_CONFIG_CONTENT`, merged over the user's TUI config).
 *
 * @param input Binary, server, session, directory, credentials.
 * @returns The argv and environment.
 *
 * @example
 * ```ts
 * import { v2Pane } from "./line.ts";
 * v2Pane({ bin: "opencode", url: "http://127.0.0.1:49374", sessionId: "ses_1", dir: "/src", ownsTitle: false }).argv;
 * // ["opencode", "--server", "http://127.0.0.1:49374", "--session", "ses_1", "/src"]
 * ```
 */
export function v2Pane(input: PaneProgramInput): PaneProgram {
  return {
    argv: [input.bin, "--server", input.url, "--session", input.sessionId, input.dir],
    env: {
      [PANE_SESSION_VAR]: input.sessionId,
      ...(input.auth ? { OPENCODE_PASSWORD: input.auth.password } : {}),
      ...(input.ownsTitle
        ? { OPENCODE_CLI_CONFIG_CONTENT: JSON.stringify({ terminal: { title: false } }) }
        : {}),
    },
  };
}

/** OpenCode 2.x. */
export const V2: OpencodeLine = {
  id: 2,
  range: ">=2.1.0 <3.0.0",
  npm: "@opencode/cli@2",
  speaks: (event) => "data" in event,
  decode: decodeV2Event,
  client: v2Client,
  pane: v2Pane,
  interrupt: "signal",
  authHint:
    "muxbridge reads the password from OPENCODE_PASSWORD, else OPENCODE_SERVER_PASSWORD, else the OpenCode service's own state file (service.json); check that the service is the one the TUI uses",
};
