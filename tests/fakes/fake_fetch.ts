/**
 * A recording fake of `fetch` for the OpenCode client. It answers by exact URL, throws on any
 * URL nobody registered, and builds its `Headers` the way the real fetch does, so a header value
 * the real one would refuse (non-Latin-1 text, a newline) fails here too.
 *
 * @module
 */

import type { Fetch } from "../../lib/opencode/client.ts";

/** One answer: a response to build, an error to throw, or a function of the request. */
export type FetchAnswer =
  | { status?: number; body?: string; json?: unknown }
  | Error
  | ((url: string, init: RequestInit) => Promise<Response>);

/** A recorded request. */
export interface FetchCall {
  /** The URL. */
  url: string;
  /** The request headers, as the real fetch would send them. */
  headers: Headers;
  /** The signal the request carried. */
  signal: AbortSignal | null;
}

/** The fake fetch with its recording and registration. */
export interface FakeFetch {
  /** The fetch to inject. */
  fetch: Fetch;
  /** Every request so far, in order. */
  calls: FetchCall[];
  /** Registers the answer for an exact URL. */
  on(url: string, answer: FetchAnswer): FakeFetch;
}

/**
 * Creates a fake fetch.
 *
 * @returns The fake.
 */
export function createFakeFetch(): FakeFetch {
  const answers = new Map<string, FetchAnswer>();
  const calls: FetchCall[] = [];
  const fake: FakeFetch = {
    calls,
    on(url, answer) {
      answers.set(url, answer);
      return fake;
    },
    async fetch(url, init = {}) {
      // The real fetch refuses invalid header values with a TypeError; so does this one.
      const headers = new Headers(init.headers);
      calls.push({ url, headers, signal: init.signal ?? null });
      const answer = answers.get(url);
      if (answer === undefined) throw new Error(`fake fetch: unexpected request ${url}`);
      if (answer instanceof Error) throw answer;
      if (typeof answer === "function") return await answer(url, init);
      const body = answer.json !== undefined ? JSON.stringify(answer.json) : answer.body ?? "";
      return new Response(body, { status: answer.status ?? 200 });
    },
  };
  return fake;
}

/**
 * A response that never comes: it waits until the request's signal aborts, then rejects with
 * the signal's reason, as the real fetch does.
 *
 * @param _url The URL.
 * @param init The request.
 * @returns A promise that only rejects.
 */
export function hang(_url: string, init: RequestInit): Promise<Response> {
  return new Promise((_resolve, reject) => {
    const signal = init.signal;
    if (!signal) return; // hangs forever: a client without a timeout fails its test by timing out
    if (signal.aborted) return reject(signal.reason);
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
}
