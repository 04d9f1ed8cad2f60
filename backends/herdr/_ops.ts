/**
 * Private to the herdr backend: the pane operations muxbridge uses, each described once for both
 * ways of sending it (`_transport.ts`): the socket method and its params, the CLI arguments, and
 * how the answer is read. Pure: building a description sends nothing.
 *
 * @module
 */

import type { z } from "zod";
import {
  OkSchema,
  PaneListSchema,
  PaneResultSchema,
  parseResult,
  ProcessInfoSchema,
} from "./_parse.ts";

/** A pane as muxbridge reads it. */
export type HerdrPane = z.infer<typeof PaneResultSchema>["result"]["pane"];

/** One operation, described for both ways. */
export interface HerdrOp<T> {
  /** What is done, for messages ("close pane \"w1:p3\""). */
  action: string;
  /** The socket method. */
  method: string;
  /** The socket method's params. */
  params: Record<string, unknown>;
  /** The CLI arguments (after the binary and `--session`). */
  args: readonly string[];
  /** Only reads: safe to repeat through the CLI after the socket failed. */
  readOnly: boolean;
  /**
   * Reads the result: the socket's answer line or the CLI's stdout, the same
   * `{"id","result":{…}}` envelope either way (docs/backends/herdr.md §6, §7).
   */
  read(text: string): T;
}

/** A split: the pane to split (else herdr's choice), the direction, the cwd, the variables. */
export interface SplitParams {
  /** The pane to split. */
  target?: string;
  /** Where the new pane goes. */
  direction: "right" | "down";
  /** Its working directory. */
  cwd: string;
  /** Variables for its shell (names and values already checked). */
  env: Readonly<Record<string, string>>;
}

const nothing = () => undefined;

const paneOf = (what: string) => (text: string) =>
  parseResult(text, PaneResultSchema, what).result.pane;
const ok = (what: string) => (text: string) => {
  parseResult(text, OkSchema, what);
};

/**
 * Splits a pane (`pane split`, `pane.split`).
 *
 * @param p The split.
 * @returns The operation; it reads the new pane.
 */
export function splitOp(p: SplitParams): HerdrOp<HerdrPane> {
  const env = Object.entries(p.env);
  return {
    action: "open a pane",
    method: "pane.split",
    params: {
      ...(p.target === undefined ? {} : { target_pane_id: p.target }),
      direction: p.direction,
      cwd: p.cwd,
      focus: false,
      env: p.env,
    },
    args: [
      "pane",
      "split",
      ...(p.target === undefined ? [] : [p.target]),
      "--direction",
      p.direction,
      "--cwd",
      p.cwd,
      "--no-focus",
      // NAME= first: the value can never be read as one of herdr's global flags.
      ...env.flatMap(([name, value]) => ["--env", `${name}=${value}`]),
    ],
    readOnly: false,
    read: paneOf("new pane"),
  };
}

/**
 * Reads one pane (`pane get`, `pane.get`).
 *
 * @param paneId The pane.
 * @returns The operation; it reads the pane.
 */
export function getOp(paneId: string): HerdrOp<HerdrPane> {
  return {
    action: `inspect pane "${paneId}"`,
    method: "pane.get",
    params: { pane_id: paneId },
    args: ["pane", "get", paneId],
    readOnly: true,
    read: paneOf("pane"),
  };
}

/**
 * Lists every pane of the server (`pane list`, `pane.list`).
 *
 * @returns The operation; it reads the panes.
 */
export function listOp(): HerdrOp<HerdrPane[]> {
  const panes = (text: string) => parseResult(text, PaneListSchema, "pane list").result.panes;
  return {
    action: "list herdr's panes",
    method: "pane.list",
    params: {},
    args: ["pane", "list"],
    readOnly: true,
    read: panes,
  };
}

/**
 * Reads a pane's shell pid (`pane process-info`, `pane.process_info`).
 *
 * @param paneId The pane.
 * @returns The operation; it reads the pid, when herdr tells.
 */
export function shellPidOp(paneId: string): HerdrOp<number | undefined> {
  const pid = (text: string) =>
    parseResult(text, ProcessInfoSchema, "process info").result.process_info.shell_pid;
  return {
    action: `read pane "${paneId}"'s process`,
    method: "pane.process_info",
    params: { pane_id: paneId },
    args: ["pane", "process-info", "--pane", paneId],
    readOnly: true,
    read: pid,
  };
}

/**
 * Types `text` and Enter into a pane (`pane run`, `pane.send_input`).
 *
 * @param paneId The pane.
 * @param text The line.
 * @returns The operation; it reads nothing.
 */
export function runOp(paneId: string, text: string): HerdrOp<void> {
  // `pane run` is `pane.send_input {text, keys:["Enter"]}` (docs/backends/herdr.md §8). Both
  // answer nothing muxbridge reads: the CLI prints nothing, the socket a bare result.
  return {
    action: `start the program in pane "${paneId}"`,
    method: "pane.send_input",
    params: { pane_id: paneId, text, keys: ["Enter"] },
    args: ["pane", "run", paneId, text],
    readOnly: false,
    read: nothing,
  };
}

/**
 * Sends keys to a pane (`pane send-keys`, `pane.send_keys`).
 *
 * @param paneId The pane.
 * @param keys The keys (`ctrl+c`).
 * @returns The operation; it reads nothing.
 */
export function sendKeysOp(paneId: string, keys: readonly string[]): HerdrOp<void> {
  return {
    action: `send ${keys.join(" ")} to pane "${paneId}"`,
    method: "pane.send_keys",
    params: { pane_id: paneId, keys },
    args: ["pane", "send-keys", paneId, ...keys],
    readOnly: false,
    read: nothing,
  };
}

/**
 * Closes a pane (`pane close`, `pane.close`).
 *
 * @param paneId The pane.
 * @returns The operation; it checks herdr's `ok`.
 */
export function closeOp(paneId: string): HerdrOp<void> {
  return {
    action: `close pane "${paneId}"`,
    method: "pane.close",
    params: { pane_id: paneId },
    args: ["pane", "close", paneId],
    readOnly: false,
    read: ok("close result"),
  };
}

/**
 * Sets a pane's label, or clears it (`pane rename`, `pane.rename`).
 *
 * @param paneId The pane.
 * @param label The label, or null to clear it.
 * @returns The operation; it reads the renamed pane.
 */
export function renameOp(paneId: string, label: string | null): HerdrOp<HerdrPane> {
  return {
    action: `title pane "${paneId}"`,
    method: "pane.rename",
    // No label clears it (`PaneRenameParams.label` is optional).
    params: label === null ? { pane_id: paneId } : { pane_id: paneId, label },
    args: ["pane", "rename", paneId, label ?? "--clear"],
    readOnly: false,
    read: paneOf("renamed pane"),
  };
}
