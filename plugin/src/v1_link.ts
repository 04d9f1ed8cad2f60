/**
 * OpenCode 1.x: the plugin function and its link, the composition of the other parts. One link
 * per realm and instance, shared by every load of the plugin in that realm (OpenCode 1.18.33
 * loads it twice with `--port`): it starts `muxbridge bridge --url <url> --dir <directory>`
 * (or relays to the realm of this process that runs it), forwards `session.*` events and
 * background jobs, and stops when the last load's `dispose` ran.
 *
 * @module
 */

import type { Hooks, Plugin, PluginInput, PluginOptions } from "@opencode-ai/plugin";
import { BridgeProcess } from "./bridge_process.ts";
import { bridgeOutput, helloLine, plainServerUrl, type Upstream } from "./bridge_talk.ts";
import { SessionEvents } from "./events.ts";
import { LineQueue } from "./line_queue.ts";
import { LogWriter, openLog } from "./log.ts";
import { type Settings, settingsFrom, SIDECAR } from "./settings.ts";
import { type Claim, claimBridge, NO_CLAIM } from "./v1_claim.ts";
import { type Forwarder, inProcessFetch, startForwarder } from "./v1_forwarder.ts";
import { bag, type Guard, guardWith, PLUGIN_VERSION, text } from "./values.ts";

/**
 * The OpenCode 1.x plugin function for a plugin installed in `here`: starts
 * `muxbridge bridge --url <url> --dir <directory>` once per OpenCode process, sends
 * `bridge.hello`, forwards every `session.*` event and background-job changes (`bridge.job`).
 *
 * @param here The folder the plugin was loaded from (its `muxbridge.json` is read there).
 * @returns The plugin: given what OpenCode hands a plugin (`serverUrl`, `directory` and
 *   `client` are used) and its options (`bin`, `log`, `instance`, `backoffMs`, `backoffMaxMs`,
 *   `maxRestarts`, `stableMs`, `queueBytes`, `stopGraceMs`; all optional), the hooks `event`,
 *   `tool.execute.after` and `dispose`. It never rejects.
 */
export function muxbridgePlugin(here: string): Plugin {
  return (input: PluginInput, options?: PluginOptions) => {
    try {
      return Promise.resolve(sharedLink(input, settingsFrom(options ?? {}, here)).join());
    } catch {
      return Promise.resolve({}); // never throw into OpenCode; nothing usable to log to
    }
  };
}

/**
 * What the realm registry holds: one bridge and everything around it, shared by every load of
 * the plugin in a realm. Only `join` is called through the registry, so loads of other copies
 * of the plugin in the same realm (an installed one beside a test's) can share a link.
 */
interface SharedLink {
  /** Hooks for one more load; the link stops when the last load's `dispose` ran. */
  join(): Hooks;
}

const LINKS = Symbol.for("muxbridge.plugin.links");

/** The realm's link for `s.instance`, created on first use. */
function sharedLink(input: PluginInput, s: Settings): SharedLink {
  const realm = globalThis as unknown as Record<symbol, Map<string, SharedLink> | undefined>;
  const links = (realm[LINKS] ??= new Map());
  let link = links.get(s.instance);
  if (!link) {
    link = createLink(input, s, () => links.delete(s.instance));
    links.set(s.instance, link);
  }
  return link;
}

/**
 * Puts a link together: its log, then whether this realm runs the bridge or relays to the realm
 * that does (nothing at all when OpenCode handed no URL or directory).
 */
function createLink(input: PluginInput, s: Settings, forget: () => void): Link {
  const log = new LogWriter(openLog(s.log));
  const guard = guardWith(log.line);
  const link = new Link(s, log, guard, forget);
  const server = plainServerUrl(input.serverUrl);
  const directory = text(input.directory);
  if (!server.url || !directory) {
    link.off("OpenCode gave the plugin no serverUrl or directory; muxbridge is not started");
    return link;
  }
  if (server.hadCredentials) {
    log.line(
      "OpenCode's server URL carries credentials (user:pass@); they were removed (never on " +
        "argv or in a log): set OPENCODE_SERVER_PASSWORD (and OPENCODE_SERVER_USERNAME)",
    );
  }
  const claim = claimBridge(s, log.line, guard, (line) => link.enqueue(line));
  link.begin(claim, input, server.url, directory);
  return link;
}

/** `off`: never started or gave up; `relay`: another realm runs the bridge; `stopped`: disposed. */
type Mode = "starting" | "running" | "relay" | "off" | "stopped";

/**
 * One link's state and its life: lines go to the bridge's queue (or to the realm that owns the
 * bridge) from `begin` until the last `dispose`.
 */
class Link implements SharedLink {
  #refs = 0;
  #mode: Mode = "starting";
  #claim: Claim = NO_CLAIM;
  #forwarder: Forwarder | null = null;
  #bridge: BridgeProcess | null = null;
  readonly #s: Settings;
  readonly #log: LogWriter;
  readonly #guard: Guard;
  readonly #forget: () => void;
  readonly #queue: LineQueue;
  readonly #onEvent: (event: Record<string, unknown>) => void;
  readonly #onToolAfter: (info: Record<string, unknown>, output: Record<string, unknown>) => void;

  constructor(s: Settings, log: LogWriter, guard: Guard, forget: () => void) {
    this.#s = s;
    this.#log = log;
    this.#guard = guard;
    this.#forget = forget;
    this.#queue = new LineQueue(s.queueBytes, log.line);
    const events = new SessionEvents((line) => this.enqueue(line), () => this.#queue.countDrop());
    this.#onEvent = guard((event) => events.event(event));
    this.#onToolAfter = guard((info, output) => events.toolAfter(info, output));
  }

  join(): Hooks {
    this.#refs++;
    let disposed = false;
    return {
      // The hooks return at once: nothing here waits on the bridge.
      event: ({ event }) => {
        this.#onEvent(bag(event));
        return Promise.resolve();
      },
      "tool.execute.after": (info, output) => {
        this.#onToolAfter(bag(info), bag(output));
        return Promise.resolve();
      },
      dispose: () => {
        if (disposed) return Promise.resolve();
        disposed = true;
        return --this.#refs > 0 ? Promise.resolve() : this.#stop().catch(() => {});
      },
    };
  }

  /** Nothing will run: says why once. */
  off(why: string): void {
    this.#mode = "off";
    this.#log.line(why);
  }

  /** Relays to the realm that owns the bridge, or settles where OpenCode is and starts it. */
  begin(claim: Claim, input: PluginInput, serverUrl: string, directory: string): void {
    this.#claim = claim;
    if (claim.relay) this.#mode = "relay";
    else {
      this.#connect(input, serverUrl, directory).catch((err) =>
        this.#log.line(`internal error: ${err}`)
      );
    }
  }

  /** One line for the bridge: queued here, or posted to the realm that runs it. */
  enqueue(line: string): void {
    if (this.#mode === "relay") return void this.#claim.channel?.postMessage(line);
    if (this.#mode !== "running" && this.#mode !== "starting") return;
    if (this.#queue.push(line)) this.#queue.drain(this.#bridge);
  }

  /**
   * Plain `opencode` first gets a forwarding endpoint (awaited); a real URL starts the bridge
   * at once, before the hooks are handed out.
   */
  async #connect(input: PluginInput, serverUrl: string, directory: string): Promise<void> {
    const direct = inProcessFetch(input, serverUrl);
    if (direct) {
      this.#forwarder = await startForwarder(direct, this.#log.line).catch((err) => {
        this.#log.line(`cannot serve the forwarding endpoint for plain opencode: ${err}`);
        return null;
      });
      if (this.#mode !== "starting") return this.#forwarder?.close();
      if (this.#forwarder) {
        this.#log.line(
          `OpenCode listens on no port: forwarding ${this.#forwarder.url} to it in-process`,
        );
      }
    }
    const f = this.#forwarder;
    this.#launch(f ? { url: f.url, auth: f.auth } : { url: serverUrl }, directory);
  }

  /** Starts the bridge process for `upstream`. */
  #launch(upstream: Upstream, directory: string): void {
    const s = this.#s;
    const refused = s.vet();
    if (refused !== null) {
      this.#queue.clear();
      this.#forwarder?.close();
      return this.off(refused);
    }
    this.#mode = "running";
    this.#log.line(
      `starting ${JSON.stringify(s.command.join(" "))} (from ${s.commandFrom}) for ` +
        `${this.#forwarder ? "the forwarding endpoint" : upstream.url} in ${directory}`,
    );
    if (s.recordedVersion && s.recordedVersion !== PLUGIN_VERSION) {
      this.#log.line(
        `version mismatch: this plugin is muxbridge ${PLUGIN_VERSION}, ${SIDECAR} was written ` +
          `by ${s.recordedVersion}; run \`muxbridge install\` again`,
      );
    }
    this.#bridge = new BridgeProcess({
      settings: s,
      args: ["bridge", "--url", upstream.url, "--dir", directory],
      hello: () => helloLine(upstream, directory),
      stderr: this.#log.fd,
      log: this.#log.line,
      guard: this.#guard,
      vet: s.vet,
      onWritable: () => this.#queue.drain(this.#bridge),
      onOutput: bridgeOutput(this.#log.line),
      onGaveUp: () => {
        this.#mode = "off";
        this.#queue.clear();
      },
    });
    this.#bridge.start();
  }

  /** The last `dispose`: ends the bridge (gracefully first), the endpoint, the lock, the log. */
  async #stop(): Promise<void> {
    if (this.#mode === "stopped") return;
    const was = this.#mode;
    this.#mode = "stopped";
    this.#forget();
    this.#claim.channel?.close();
    await this.#bridge?.stop(this.#s.stopGraceMs);
    this.#forwarder?.close();
    this.#claim.release();
    this.#queue.reportTotal();
    if (was !== "relay") this.#log.line("stopped");
    await this.#log.close();
  }
}
