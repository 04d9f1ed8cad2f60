/**
 * The cmux backend (cmux >= 0.64.14, macOS): one surface per child session, split to the right of
 * the surface muxbridge runs in, its program typed into the new terminal's shell.
 *
 * cmux has closed a *different* live surface and exited 0 when `close-surface` got a ref it could
 * not resolve (issue #9410, still in 0.64.20; docs/backends/cmux.md §5). So this backend only ever
 * names surfaces by UUID, always passes `--workspace` and pins `--socket`, refuses to touch the
 * surface it runs in, re-lists the workspace right before closing (an unlisted surface is never
 * passed to close-surface), and lists it again afterwards: if any other surface vanished or the
 * receipt names another surface, the close fails loudly (`close_unverified`, logged as an error).
 *
 * Verified against a fake CLI only (`tests/fakes/bin/cmux`); cmux cannot run here. The facts it
 * relies on, with the upstream source they come from, are in `docs/backends/cmux.md` (cited "§N").
 *
 * @module
 */

import { keepSuccess } from "../../lib/backend/_keep_success.ts";
import { gateVersion } from "../../lib/backend/_version_gate.ts";
import type {
  Backend,
  BackendDeps,
  Check,
  LayoutResult,
  PaneInfo,
  ProbeResult,
  SpawnedPane,
  SpawnRequest,
} from "../../lib/backend/backend.ts";
import { failedCheck } from "../../lib/backend/failed_check.ts";
import { MuxError, toMuxError } from "../../lib/sys/errors.ts";
import {
  cleanTitle,
  type PaneId,
  validateDirectory,
  validateTarget,
} from "../../lib/sys/validate.ts";
import { cmuxError, createCmuxCommand, SOCKET_HINT } from "./_command.ts";
import {
  type CmuxSurface,
  type CmuxWorkspace,
  parseReceipt,
  parseSplit,
  parseSplitHelp,
  parseTree,
  sameId,
  type SplitFeatures,
  surfaceId,
  UUID,
} from "./_parse.ts";
import { CMUX_CAPABILITIES, CMUX_GATE, CMUX_MIN_VERSION, type CmuxConfig } from "./_traits.ts";
import { typedCommand } from "./_typed.ts";

const IDENTITY_HINT =
  "Run muxbridge inside a cmux terminal: CMUX_SOCKET_PATH, CMUX_WORKSPACE_ID and CMUX_SURFACE_ID must all be set";

/** Where a surface is. */
interface Located {
  workspace: CmuxWorkspace;
  surface: CmuxSurface;
}

function locate(tree: readonly CmuxWorkspace[], id: string): Located | undefined {
  for (const workspace of tree) {
    const surface = workspace.surfaces.find((s) => sameId(s.id, id));
    if (surface) return { workspace, surface };
  }
  return undefined;
}

/**
 * Creates the cmux backend.
 *
 * @param deps Runner, env, clock, config (`cmux.*`, `command_timeout_ms`), identity (its cmux
 *   layer: socket, workspace and the caller's surface, all three required).
 * @returns The backend.
 *
 * @example
 * ```ts
 * import type { BackendDeps } from "../../lib/backend/backend.ts";
 * import { validateSessionId } from "../../lib/sys/validate.ts";
 * import type { CmuxConfig } from "./_traits.ts";
 * import { createCmuxBackend } from "./backend.ts";
 *
 * async function openAndClose(deps: BackendDeps<CmuxConfig>): Promise<void> {
 *   const backend = createCmuxBackend(deps);
 *   await backend.probe();
 *   const { paneId } = await backend.spawn({
 *     sessionId: validateSessionId("ses_1"),
 *     title: "fix",
 *     argv: ["opencode", "attach", "http://127.0.0.1:4096", "--session", "ses_1"],
 *     cwd: "/home/me/project",
 *     env: {},
 *     owner: "cli",
 *   });
 *   await backend.kill(paneId);
 * }
 * ```
 */
export function createCmuxBackend(deps: BackendDeps<CmuxConfig>): Backend {
  const cmux = createCmuxCommand(deps);
  const layer = deps.identity.layers.find((l) => l.backend === "cmux");

  /** The workspace and the caller's surface, from the complete cmux identity only. */
  const context = (): { workspace: string; caller: string } => {
    const socket = deps.config.cmux.socket_path;
    if (!layer?.workspaceId || !layer.paneId || !layer.socket) {
      throw new MuxError("no_backend", "Cannot place panes: not inside a cmux terminal", {
        hint: IDENTITY_HINT,
      });
    }
    if (socket !== undefined && socket !== layer.socket) {
      // The workspace and surface ids name objects of the cmux on CMUX_SOCKET_PATH.
      throw new MuxError(
        "no_backend",
        `Cannot place panes: cmux.socket_path "${socket}" is not the cmux muxbridge runs in`,
        { hint: "Remove cmux.socket_path or run muxbridge inside that cmux" },
      );
    }
    for (
      const [name, value] of [["CMUX_WORKSPACE_ID", layer.workspaceId], [
        "CMUX_SURFACE_ID",
        layer.paneId,
      ]]
    ) {
      validateTarget(name, value);
      if (!UUID.test(value)) {
        throw new MuxError(
          "no_backend",
          `Cannot use ${name} ${JSON.stringify(value)}: not a UUID`,
          {
            hint: `cmux >= ${CMUX_MIN_VERSION} sets UUIDs; update cmux`,
          },
        );
      }
    }
    return { workspace: layer.workspaceId, caller: layer.paneId };
  };

  const readVersion = async (signal?: AbortSignal) => {
    const run = await cmux.bare(["--version"], signal);
    const text = run.stdout.trim().split("\n")[0] ?? "";
    if (run.code !== 0) throw cmuxError("read the cmux version", run);
    const version = gateVersion(CMUX_GATE, text, { argv: run.argv }).semver;
    return { version, text };
  };

  /** Version gate and the optional new-split flags, once per backend (a failure is retried). */
  const ensure = keepSuccess(async (signal?: AbortSignal) => {
    const { version, text } = await readVersion(signal);
    // `<command> --help` works without a socket (docs/backends/cmux.md §3).
    const help = await cmux.bare(["new-split", "--help"], signal);
    const features = parseSplitHelp(help.code === 0 ? `${help.stdout}\n${help.stderr}` : "");
    return { version, text, features };
  });

  const tree = async (signal?: AbortSignal) =>
    parseTree(await cmux.must("list cmux surfaces", ["tree", "--all"], true, signal));

  /** Refuses the surface muxbridge itself runs in (close-surface defaults to it, too). */
  const refuseCaller = (id: string, action: string) => {
    if (layer?.paneId && sameId(id, layer.paneId)) {
      throw new MuxError(
        "not_owned",
        `Cannot ${action} surface ${id}: it is the one muxbridge runs in`,
        { hint: "muxbridge never closes or interrupts its own surface" },
      );
    }
  };

  const spawn = async (req: SpawnRequest): Promise<SpawnedPane> => {
    validateTarget("owner", req.owner);
    const cwd = validateDirectory(req.cwd);
    const title = cleanTitle(req.title);
    const text = typedCommand(cwd, req.argv);
    if (Object.keys(req.env).length > 0) {
      // Refused, not dropped: a pane without its credentials would fail to attach (contract).
      throw new MuxError(
        "auth_unsupported",
        "Cannot pass credentials to a cmux surface: cmux has no per-surface environment",
        {
          hint:
            "Use a backend with an environment flag (tmux, kitty, herdr) for a password-protected server",
        },
      );
    }
    const { features } = await ensure(req.signal);
    const { workspace, caller } = context();
    const before = await tree(req.signal);
    if (!locate(before, caller)) {
      throw new MuxError(
        "pane_not_found",
        `Cannot find the surface muxbridge runs in (${caller})`,
        {
          hint: IDENTITY_HINT,
        },
      );
    }
    // cmux's own option parser might read a value starting with "-" as an option.
    const titleOk = title !== "" && !title.startsWith("-");
    if (title !== "" && !titleOk) deps.log.warn(`cmux: title ${JSON.stringify(title)} not set`);
    const args = [
      "new-split",
      "right",
      "--workspace",
      workspace,
      "--surface",
      caller,
      "--focus",
      "false",
    ];
    if (features.cwd) args.push("--cwd", cwd);
    if (features.title && titleOk) args.push("--title", title);
    if (features.command) args.push("--command", text);
    const stdout = await cmux.must(`open a surface next to ${caller}`, args, true, req.signal);
    let split;
    try {
      split = parseSplit(stdout);
    } catch (err) {
      // cmux exited 0: the split was made, its answer is unreadable. Leave nothing behind.
      await closeLeftover(workspace, before, "its answer was unreadable");
      throw err;
    }
    if (split.surfaceId === null) {
      await closeLeftover(workspace, before, "cmux named no surface for it");
      throw new MuxError(
        "unsupported",
        "Cannot use the split cmux made: its answer names no surface (surface_id null, as in a remote tmux workspace)",
        { hint: "Run OpenCode in a local cmux workspace" },
      );
    }
    const surface = split.surfaceId;
    if (!features.command) {
      // Builds without new-split --command: start it in the new, empty terminal.
      try {
        await cmux.must(
          `start the program in surface ${surface}`,
          ["respawn-pane", "--workspace", workspace, "--surface", surface, "--command", text],
          false,
          req.signal,
        );
      } catch (err) {
        await kill(surface).catch((e) =>
          deps.log.error(`cmux: cannot close empty surface ${surface}: ${toMuxError(e).message}`)
        );
        throw err;
      }
    }
    if (!(features.title) && titleOk) {
      await setTitle(surface, title, req.signal).catch((err) =>
        deps.log.warn(`cmux: cannot title surface ${surface}: ${toMuxError(err).message}`)
      );
    }
    return { paneId: surface };
  };

  /**
   * Closes what a split made when its answer cannot be used: the one surface of the workspace,
   * in a pane of its own, that was not there before. More than one such surface (the user split
   * at the same moment) is never guessed at: logged for the user to close by hand.
   */
  const closeLeftover = async (workspace: string, before: CmuxWorkspace[], why: string) => {
    try {
      const was = before.find((w) => sameId(w.id, workspace))?.surfaces ?? [];
      const now = (await tree()).find((w) => sameId(w.id, workspace))?.surfaces ?? [];
      const fresh = now.filter((s) =>
        !was.some((b) => sameId(b.id, s.id) || sameId(b.paneId, s.paneId))
      );
      if (fresh.length === 1) {
        deps.log.warn(`cmux: closing surface ${fresh[0].id}, made by a split whose answer ${why}`);
        await kill(surfaceId(fresh[0].id));
      } else if (fresh.length > 1) {
        deps.log.error(
          `cmux: a split whose answer ${why} left one of ${
            fresh.map((s) => s.id).join(", ")
          }; not closing any (cannot tell which), close it by hand`,
        );
      }
    } catch (err) {
      deps.log.error(`cmux: cannot close what a split left: ${toMuxError(err).message}`);
    }
  };

  const inspect = async (paneId: PaneId, signal?: AbortSignal): Promise<PaneInfo | null> => {
    const id = surfaceId(paneId);
    const found = locate(await tree(signal), id);
    if (!found) return null;
    // A cmux terminal closes when its program (exec'd by the typed line) ends, so a listed
    // surface is never dead. cmux reports no pid.
    const info: PaneInfo = { paneId: id, dead: false };
    if (found.surface.title !== undefined) info.title = found.surface.title;
    return info;
  };

  const interrupt = async (paneId: PaneId, signal?: AbortSignal) => {
    const id = surfaceId(paneId);
    refuseCaller(id, "interrupt");
    // Builds before PR #2150 sent keys for an unresolvable surface to the focused one
    // (docs/backends/cmux.md §5): only ever name a surface that is listed right now.
    const found = locate(await tree(signal), id);
    if (!found) throw new MuxError("pane_not_found", `Cannot interrupt surface ${id}: it is gone`);
    await cmux.must(
      `interrupt surface ${id}`,
      ["send-key", "--workspace", found.workspace.id, "--surface", id, "ctrl+c"],
      false,
      signal,
    );
  };

  const kill = async (paneId: PaneId, signal?: AbortSignal) => {
    const id = surfaceId(paneId);
    refuseCaller(id, "close");
    const before = locate(await tree(signal), id);
    if (!before) throw new MuxError("pane_not_found", `Cannot close surface ${id}: it is gone`);
    const ws = before.workspace;
    const run = await cmux.run(
      ["close-surface", "--workspace", ws.id, "--surface", id],
      false,
      signal,
    );
    if (run.code !== 0) throw cmuxError(`close surface ${id}`, run);
    const receipt = parseReceipt(run.stdout);
    const after = (await tree(signal)).find((w) => sameId(w.id, ws.id))?.surfaces ?? [];
    const remains = (s: CmuxSurface) => after.some((a) => sameId(a.id, s.id));
    const vanished = ws.surfaces.filter((s) => !sameId(s.id, id) && !remains(s));
    const named = receipt.uuids[0];
    const wrongReceipt = named !== undefined && !sameId(named, id);
    if (vanished.length > 0 || wrongReceipt) {
      const others = vanished.map((s) => `${s.id}${s.title ? ` ("${s.title}")` : ""}`);
      const message = `Cannot verify the close of surface ${id}: ${
        wrongReceipt ? `cmux reported closing ${named}` : "cmux reported closing it"
      }${
        others.length > 0 ? ` and surface(s) ${others.join(", ")} vanished from the workspace` : ""
      }`;
      deps.log.error(`cmux: ${message}`);
      throw new MuxError("close_unverified", message, {
        argv: run.argv,
        hint:
          "cmux closed a surface muxbridge did not ask for (cmux issue #9410); check your panes and update cmux",
      });
    }
    const appeared = after.filter((a) => !ws.surfaces.some((s) => sameId(s.id, a.id)));
    if (appeared.length > 0) {
      // 0.64.22 was reported to create an empty replacement panel on close (issue #12524).
      deps.log.warn(
        `cmux: closing surface ${id} made new surface(s) ${appeared.map((s) => s.id).join(", ")}`,
      );
    }
  };

  const setTitle = async (paneId: PaneId, title: string, signal?: AbortSignal) => {
    const id = surfaceId(paneId);
    const clean = cleanTitle(title);
    if (clean.startsWith("-")) {
      throw new MuxError("invalid_argument", `Cannot set cmux title ${JSON.stringify(clean)}`, {
        hint: "cmux may read a title starting with '-' as an option",
      });
    }
    const found = locate(await tree(signal), id);
    if (!found) throw new MuxError("pane_not_found", `Cannot title surface ${id}: it is gone`);
    await cmux.must(
      `title surface ${id}`,
      ["rename-tab", "--workspace", found.workspace.id, "--surface", id, "--title", clean],
      false,
      signal,
    );
  };

  const applyLayout = (): Promise<LayoutResult> =>
    Promise.resolve({
      applied: false,
      detail:
        "cmux has no named layouts: surfaces stay to the right of the caller where new-split put them",
    });

  const probe = async (signal?: AbortSignal): Promise<ProbeResult> => {
    const { version } = await ensure(signal);
    const { caller } = context();
    if (!locate(await tree(signal), caller)) {
      throw new MuxError("no_backend", `Cannot find the surface muxbridge runs in (${caller})`, {
        hint: IDENTITY_HINT,
      });
    }
    return { binary: cmux.bin, version };
  };

  const doctor = async (signal?: AbortSignal): Promise<Check[]> => {
    const checks: Check[] = [];
    let found: { version: string; text: string; features: SplitFeatures };
    try {
      found = await ensure(signal);
    } catch (err) {
      const e = toMuxError(err);
      const check = failedCheck(e.code === "binary_not_found" ? "cmux binary" : "cmux version", e);
      if (e.code === "unparseable_output") check.status = "warn";
      checks.push(check);
      return checks;
    }
    checks.push({ name: "cmux binary", status: "pass", detail: `${cmux.bin}: ${found.text}` });
    checks.push({
      name: "cmux version",
      status: "pass",
      detail: `${found.version} >= ${CMUX_MIN_VERSION}`,
    });
    checks.push(
      found.features.command
        ? { name: "cmux new-split", status: "pass", detail: "starts programs with --command" }
        : {
          name: "cmux new-split",
          status: "warn",
          detail: "no --command: programs start through respawn-pane after the split",
          hint: "Update cmux for one-step starts",
        },
    );
    let ctx: { workspace: string; caller: string };
    try {
      ctx = context();
      checks.push({
        name: "cmux identity",
        status: "pass",
        detail: `workspace ${ctx.workspace}, surface ${ctx.caller}`,
      });
    } catch (err) {
      checks.push(failedCheck("cmux identity", err));
      return checks;
    }
    try {
      const all = await tree(signal);
      const ws = all.find((w) => sameId(w.id, ctx.workspace));
      checks.push({
        name: "cmux socket",
        status: "pass",
        detail: `answers on ${cmux.socket()} (${all.length} workspaces)`,
      });
      checks.push(
        ws?.surfaces.some((s) => sameId(s.id, ctx.caller))
          ? { name: "cmux surface", status: "pass", detail: `panes open right of ${ctx.caller}` }
          : {
            name: "cmux surface",
            status: "fail",
            detail: `surface ${ctx.caller} is not in workspace ${ctx.workspace}`,
            hint: IDENTITY_HINT,
          },
      );
    } catch (err) {
      const check = failedCheck("cmux socket", err);
      check.hint ??= SOCKET_HINT;
      checks.push(check);
    }
    return checks;
  };

  return {
    name: "cmux",
    capabilities: CMUX_CAPABILITIES,
    probe,
    spawn,
    inspect,
    listOwned: () => Promise.resolve([]),
    // No token reaches a cmux surface (see CMUX_CAPABILITIES).
    findSpawned: () => Promise.resolve([]),
    interrupt,
    kill,
    setTitle,
    applyLayout,
    doctor,
  };
}
