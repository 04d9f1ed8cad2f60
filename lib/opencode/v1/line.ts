/**
 * OpenCode 1.x (npm `opencode-ai`, verified on 1.18.33): one server per TUI process, events
 * shaped `{type, properties}`, the routes `/global/health`, `/session/status`, `/session/:id`,
 * the pending lists `/permission` and `/question`, and the warm-up of `/agent`, `/provider` and
 * `/config/providers` (scoped to a project with `?directory=`), and panes that run
 * `opencode attach <url> --session <id> --dir <dir>`, which exits on a typed Ctrl+C. What each
 * of these rests on is in `docs/opencode.md`.
 *
 * @module
 */

import { z } from "zod";
import type { Answer, CallOptions, Http } from "../_http.ts";
import type { LineClient, ServerHealth, ServerSession, SessionActivity } from "../client.ts";
import { retryAttempt } from "../_invalid.ts";
import type { OpencodeLine, PaneProgram, PaneProgramInput } from "../line.ts";
import { decodeV1Event } from "./events.ts";
import { requestsOf } from "../pending.ts";

const HealthSchema = z.looseObject({ healthy: z.boolean(), version: z.string().optional() });
const StatusMapSchema = z.record(
  z.string(),
  z.looseObject({ type: z.string(), attempt: z.unknown().optional() }),
);
/** A list of pending requests: an array (its entries are read leniently by `requestsOf`). */
const PendingListSchema = z.array(z.unknown());
/** What `opencode attach` asks first and a fresh server is slow to load (`LineClient.warm`). */
const WARM_ROUTES = ["/agent", "/provider", "/config/providers"] as const;
const SessionSchema = z.looseObject({
  id: z.string(),
  parentID: z.string().nullish(),
  title: z.string().nullish(),
  directory: z.string().nullish(),
});

/** `?directory=` for instance routes (a query parameter: a header cannot carry every path). */
function scoped(path: string, call: CallOptions | undefined): string {
  return call?.directory ? `${path}?directory=${encodeURIComponent(call.directory)}` : path;
}

/** The path of 1.x's health route. */
export const V1_HEALTH = "/global/health";

/**
 * Reads 1.x's health from an answer of {@linkcode V1_HEALTH} (a server without the route is
 * taken as healthy with no version).
 *
 * @param http The transport.
 * @param got The answer.
 * @returns The health.
 * @throws {MuxError} as {@linkcode Http.parse}.
 */
export function v1Health(http: Http, got: Answer): ServerHealth {
  return http.parse<ServerHealth>(got, V1_HEALTH, HealthSchema, () => ({ healthy: true }));
}

/**
 * The 1.x routes on a transport.
 *
 * @param http The transport.
 * @returns The routes.
 */
export function v1Client(http: Http): LineClient {
  return {
    async health(call) {
      return v1Health(http, await http.answer(V1_HEALTH, call));
    },
    async statusMap(call) {
      const map = await http.json(scoped("/session/status", call), StatusMapSchema, call);
      const out = new Map<string, SessionActivity>();
      // `retry` and unknown types count as activity (contract).
      for (const [id, { type, attempt }] of Object.entries(map)) {
        out.set(
          id,
          type === "idle"
            ? { status: "idle" }
            : type === "retry"
            ? { status: "busy", retry: retryAttempt(attempt) }
            : { status: "busy" },
        );
      }
      return out;
    },
    async session(id, call) {
      const s = await http.json<z.output<typeof SessionSchema> | null>(
        scoped(`/session/${encodeURIComponent(id)}`, call),
        SessionSchema,
        call,
        () => null,
      );
      return s === null ? null : {
        id: s.id,
        ...(s.parentID ? { parentID: s.parentID } : {}),
        ...(s.title ? { title: s.title } : {}),
        ...(s.directory ? { directory: s.directory } : {}),
      } satisfies ServerSession;
    },
    async pendingRequests(call) {
      const [permissions, questions] = await Promise.all(
        (["permission", "question"] as const).map((kind) =>
          http.json<unknown[] | null>(scoped(`/${kind}`, call), PendingListSchema, call, () => null)
        ),
      );
      if (permissions === null && questions === null) return null;
      return [
        ...requestsOf(permissions ?? [], "permission"),
        ...requestsOf(questions ?? [], "question"),
      ];
    },
    async warm(call) {
      await Promise.all(
        WARM_ROUTES.map((route) => http.answer(scoped(route, call), call)),
      );
    },
  };
}

/**
 * The pane program: `<bin> attach <url> --session <id> --dir <dir>`, credentials in
 * `OPENCODE_SERVER_USERNAME`/`OPENCODE_SERVER_PASSWORD`. (Whether the TUI sets its own title is
 * decided by the pane's start command: `OPENCODE_DISABLE_TERMINAL_TITLE`, see
 * `lib/session/pane_program.ts`.)
 *
 * @param input Binary, server, session, directory, credentials.
 * @returns The argv and environment.
 *
 * @example
 * ```ts
 * import { v1Pane } from "./line.ts";
 * v1Pane({ bin: "opencode", url: "http://127.0.0.1:4096", sessionId: "ses_1", dir: "/src", ownsTitle: false }).argv;
 * // ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_1", "--dir", "/src"]
 * ```
 */
export function v1Pane(input: PaneProgramInput): PaneProgram {
  return {
    argv: [input.bin, "attach", input.url, "--session", input.sessionId, "--dir", input.dir],
    env: input.auth
      ? {
        OPENCODE_SERVER_USERNAME: input.auth.username,
        OPENCODE_SERVER_PASSWORD: input.auth.password,
      }
      : {},
  };
}

/** OpenCode 1.x. */
export const V1: OpencodeLine = {
  id: 1,
  range: ">=1.0.0 <2.0.0",
  npm: "opencode-ai@1",
  speaks: (event) => "properties" in event,
  decode: decodeV1Event,
  client: v1Client,
  pane: v1Pane,
  interrupt: "key",
  authHint:
    "Set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME) to the server's credentials",
};
