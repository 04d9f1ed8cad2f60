/**
 * Which parent sessions a bridge's TUI drives, when one OpenCode server serves many TUIs (2.x's
 * per-user service; `scope: "tui"`). The plugin tells its bridge each session its TUI shows
 * (`bridge.view`); a child belongs to the bridge whose TUI showed its parent most recently. So
 * that two TUIs of one user never both open a pane for a child, each view is also written as a
 * claim in the private state directory (`views/<session>`, holding the bridge's owner stamp):
 * the latest writer holds the session, and a claim of a bridge that is gone counts for nothing.
 *
 * @module
 */

import { rmSync } from "node:fs";
import { join } from "node:path";
import { ensurePrivateSubdir, readPrivateFile, writePrivateFile } from "../sys/private_fs.ts";
import type { SessionId } from "../sys/validate.ts";

/** The most sessions one bridge remembers as shown (the oldest is forgotten first). */
export const MAX_VIEWS = 256;

/** Claims shared by the bridges of one user. */
export interface Claims {
  /** Records that this bridge's TUI shows `id` now. */
  claim(id: SessionId): void;
  /** The owner stamp of the bridge whose TUI showed `id` last, or null when none says so. */
  holder(id: SessionId): string | null;
  /** Removes this bridge's claim on `id` (a deleted session). */
  release(id: SessionId): void;
}

/**
 * Claims as files in `<stateDir>/views/`, private like the pane records.
 *
 * @param stateDir The private state directory (the pane store's).
 * @param owner This bridge's owner stamp.
 * @returns The claims.
 */
export function createClaims(stateDir: string, owner: string): Claims {
  const dir = () => ensurePrivateSubdir(stateDir, "views");
  const file = (id: SessionId) => join(dir(), id);
  return {
    claim(id) {
      writePrivateFile(file(id), owner, { sync: false });
    },
    holder(id) {
      const read = readPrivateFile(file(id), 64);
      return read.ok ? read.text.trim() : null;
    },
    release(id) {
      if (this.holder(id) === owner) rmSync(file(id), { force: true });
    },
  };
}

/**
 * The sessions one bridge's TUI has shown, oldest first, at most {@linkcode MAX_VIEWS}.
 */
export class Views {
  readonly #shown = new Set<SessionId>();
  #latest: SessionId | null = null;

  /**
   * Notes that the TUI shows `id` now.
   *
   * @param id The session.
   * @returns Whether it is newly shown (not the latest already).
   */
  show(id: SessionId): boolean {
    const fresh = this.#latest !== id;
    this.#latest = id;
    this.#shown.delete(id);
    this.#shown.add(id);
    if (this.#shown.size > MAX_VIEWS) {
      this.#shown.delete(this.#shown.values().next().value as SessionId);
    }
    return fresh;
  }

  /** Whether the TUI has shown `id`. */
  has(id: SessionId): boolean {
    return this.#shown.has(id);
  }

  /** Forgets `id` (deleted). */
  forget(id: SessionId): boolean {
    if (this.#latest === id) this.#latest = null;
    return this.#shown.delete(id);
  }

  /** Every session shown. */
  all(): SessionId[] {
    return [...this.#shown];
  }
}
