/**
 * What a child waits on the user for ({@linkcode Attention}): the permission requests and
 * questions it has open, from the asked and answered events, the child's own status and the
 * server's lists of pending requests; and the one announcement (`attend`) of each wait.
 *
 * The rules, so that the state is never stuck: a request opens with its asked event (or when a
 * pending list names it) and ends with its reply, rejection or cancellation; every request ends
 * when the child goes idle (a status event, or a poll that finds it idle or absent) or is
 * deleted; a pending list replaces the open requests with the ones it names. A poll or list sent
 * before the last attention event is older news than that event and changes nothing (the next
 * one corrects).
 *
 * @module
 */

import {
  type Attention,
  type MachineEvent,
  MAX_OPEN_REQUESTS,
  type OpenRequest,
  type SessionRecord,
  type Transition,
} from "./types.ts";

/** A child that waits on nothing. */
export const NO_ATTENTION: Attention = {
  requests: [],
  at: Number.NEGATIVE_INFINITY,
  announced: false,
};

/**
 * Whether a child waits on the user.
 *
 * @param record The child.
 * @returns Whether a request of it is open.
 */
export function isWaiting(record: SessionRecord): boolean {
  return record.attention.requests.length > 0;
}

/**
 * The record with what the event says about the child's open requests (the same record when
 * nothing changed).
 *
 * @param record The record.
 * @param e The event.
 * @param now The time.
 * @returns The record.
 */
export function seeAttention(
  record: SessionRecord,
  e: MachineEvent,
  now: number,
): SessionRecord {
  const a = record.attention;
  let next: Attention = a;
  switch (e.type) {
    case "attention": {
      const rest = a.requests.filter((r) => r.id !== e.requestId);
      const requests = !e.open ? rest : rest.length < a.requests.length ||
          a.requests.length >= MAX_OPEN_REQUESTS
        ? a.requests // already open, or no room: it waits all the same
        : [...a.requests, { id: e.requestId, what: e.what, since: now }];
      // The wait ends with its last request: the next one is announced anew.
      next = requests.length === 0 ? { requests, at: now, announced: false } : {
        ...a,
        requests,
        at: now,
      };
      break;
    }
    case "status":
      // An idle child asks nothing any more (a request still open would keep it busy).
      if (e.status === "idle") next = settled(a, now);
      break;
    case "poll":
      if (e.status !== "busy" && e.at >= a.at) next = settled(a, a.at);
      break;
    case "recheck":
      if (e.status === "idle" || e.status === "deleted") {
        next = settled(a, a.at);
      }
      break;
    case "pending":
      if (e.at >= a.at) next = listed(a, e.requests, now);
      break;
    case "deleted":
      next = settled(a, now);
      break;
    default:
      return record;
  }
  return sameAttention(next, a) ? record : { ...record, attention: next };
}

/** No request open (a wait that ends is announced again next time). */
function settled(a: Attention, at: number): Attention {
  return a.requests.length === 0 && a.at === at ? a : { requests: [], at, announced: false };
}

/** The open requests a pending list names, keeping when each was first seen. */
function listed(
  a: Attention,
  requests: ReadonlyArray<
    { readonly id: string; readonly what: OpenRequest["what"] }
  >,
  now: number,
): Attention {
  const known = new Map(a.requests.map((r) => [r.id, r]));
  const next: OpenRequest[] = [];
  for (const r of requests) {
    if (next.length >= MAX_OPEN_REQUESTS) break;
    if (next.some((n) => n.id === r.id)) continue;
    next.push(known.get(r.id) ?? { id: r.id, what: r.what, since: now });
  }
  next.sort((x, y) => x.since - y.since);
  return next.length === 0 ? settled(a, a.at) : { ...a, requests: next };
}

function sameAttention(a: Attention, b: Attention): boolean {
  return a.at === b.at && a.announced === b.announced &&
    a.requests.length === b.requests.length &&
    a.requests.every((r, i) => r === b.requests[i]);
}

/**
 * The transition with the wait announced once its pane is open: `attend` goes out the first
 * time the child waits with an open pane (a wait that began before the pane opened is announced
 * when it opens).
 *
 * @param t The transition.
 * @returns The transition, with `attend` appended when due.
 */
export function announce(t: Transition): Transition {
  const { record } = t;
  const a = record.attention;
  const s = record.state;
  if (a.announced || a.requests.length === 0 || s.kind !== "open") return t;
  return {
    record: { ...record, attention: { ...a, announced: true } },
    effects: [...t.effects, {
      type: "attend",
      paneId: s.paneId,
      what: a.requests[0].what,
    }],
  };
}
