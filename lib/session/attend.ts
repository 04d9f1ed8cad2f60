/**
 * The I/O behind the machine's `attend` effect: a child started waiting for the user and its
 * pane is open. Its pane rings the terminal bell (`attention_bell`, on by default: see
 * `pane_bell.ts`); as configured, the pane is brought to the front (`attention_focus`) and
 * `attention_command` runs, as argv with the session id and the pane title appended, through
 * the exec seam, never a shell.
 *
 * The machine asks at most once per child per wait. Across children the attender rate-limits
 * what the user notices as a burst: at most one focus and one command per
 * {@linkcode ATTENTION_INTERVAL_MS} (and one command at a time), the rest skipped with a log
 * line; each child's bell goes to its own pane and is not limited.
 *
 * @module
 */

import { isMuxError } from "../sys/errors.ts";
import { describeArgv } from "../sys/exec.ts";
import type { PaneId } from "../sys/validate.ts";
import type { AttentionKind } from "./events.ts";
import type { LoopEnv, Session } from "./session.ts";

/** The least time between two focuses, and between two commands, across children. */
export const ATTENTION_INTERVAL_MS = 1000;

/** Announces waits for the user. */
export class Attender {
  readonly #env: () => LoopEnv;
  #lastFocus = Number.NEGATIVE_INFINITY;
  #lastCommand = Number.NEGATIVE_INFINITY;
  #commandRunning = false;
  readonly #said = new Set<string>();

  /**
   * Creates an attender that has announced nothing.
   *
   * @param env The loop's context, config and deps as they are now.
   */
  constructor(env: () => LoopEnv) {
    this.#env = env;
  }

  /**
   * Announces that a child waits for the user: bell, focus, command, as configured.
   *
   * @param session The child (its pane handle attached).
   * @param paneId Its open pane.
   * @param what What it asks for.
   * @returns Once the bell rang and the focus and the command (if any) are done; never rejects.
   */
  async attend(
    session: Session,
    paneId: PaneId,
    what: AttentionKind,
  ): Promise<void> {
    const env = this.#env();
    const { config, deps } = env;
    const pane = session.pane;
    if (pane?.record.paneId !== paneId) return;
    const id = session.record.id;
    deps.log.info(`${id}: waits for you (${what}) in pane ${paneId}`);
    if (config.attention_bell) this.#ring(session, env);
    const now = deps.clock.now();
    const work: Promise<void>[] = [];
    if (config.attention_focus) {
      if (!pane.backend.focus) {
        this.#once(
          `focus:${pane.backend.name}`,
          `attention_focus: ${pane.backend.name} panes cannot be focused by muxbridge`,
        );
      } else if (now - this.#lastFocus < ATTENTION_INTERVAL_MS) {
        deps.log.debug(
          `${id}: not focused: another pane was focused less than a second ago`,
        );
      } else {
        this.#lastFocus = now;
        work.push(
          pane.backend.focus(paneId).catch((err) => {
            if (!isMuxError(err, "pane_not_found")) {
              deps.log.warn(
                `${id}: cannot focus pane ${paneId}: ${(err as Error).message}`,
              );
            }
          }),
        );
      }
    }
    const command = config.attention_command;
    if (command !== undefined) {
      if (!deps.run) {
        this.#once(
          "command:run",
          "attention_command: no program runner in this loop",
        );
      } else if (
        this.#commandRunning || now - this.#lastCommand < ATTENTION_INTERVAL_MS
      ) {
        deps.log.info(
          `${id}: attention_command skipped: it ran less than a second ago (at most one a second)`,
        );
      } else {
        this.#lastCommand = now;
        this.#commandRunning = true;
        const argv = [...command, id, session.record.title];
        work.push(
          deps.run(argv, { timeoutMs: config.command_timeout_ms }).then(
            (r) => {
              if (r.code !== 0) {
                deps.log.warn(
                  `attention_command ${describeArgv(argv)} exited with code ${r.code}: ${
                    r.stderr.trim().slice(0, 300)
                  }`,
                );
              }
            },
            (err) =>
              deps.log.warn(
                `cannot run attention_command ${describeArgv(command)}: ${(err as Error).message}`,
              ),
          ).finally(() => (this.#commandRunning = false)),
        );
      }
    }
    await Promise.all(work);
  }

  /** Rings the pane's bell; says why not once per reason. */
  #ring(session: Session, env: LoopEnv): void {
    const { deps } = env;
    const record = session.pane?.record;
    if (!deps.bell || record?.token === undefined) {
      this.#once(
        "bell:none",
        "attention_bell: this loop cannot find its panes' terminals",
      );
      return;
    }
    let exitFile: string;
    try {
      exitFile = deps.store.exitFile(record.token);
    } catch (err) {
      deps.log.debug(
        `${session.record.id}: no bell: ${(err as Error).message}`,
      );
      return;
    }
    const outcome = deps.bell.ring({
      exitFile,
      ...(record.pid === undefined ? {} : { pid: record.pid }),
    });
    if (outcome === "rung") return;
    deps.log.debug(
      `${session.record.id}: no bell in pane ${record.paneId}: ${
        outcome === "no_program"
          ? "its start command is not found (no /proc, or it ended)"
          : "its terminal did not take it"
      }`,
    );
  }

  #once(key: string, message: string): void {
    if (this.#said.has(key)) return;
    this.#said.add(key);
    this.#env().deps.log.info(message);
  }
}
