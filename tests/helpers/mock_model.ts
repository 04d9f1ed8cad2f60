/**
 * A loopback OpenAI-compatible model server for the real OpenCode server in tests: it answers
 * `POST …/chat/completions`, streaming `chat.completion.chunk` lines (a role chunk, one chunk per
 * word with a configurable delay, a `finish_reason: "stop"` chunk, a usage chunk, `[DONE]`) and
 * answering non-streaming requests (title generation) at once. The shape is what OpenCode
 * 1.18.33's bundled `@ai-sdk/openai-compatible` provider accepted, seen live.
 *
 * A prompt makes a child session busy for as long as its stream runs: the per-chunk delay sets
 * that time, and {@linkcode MockModel.hold} keeps every new stream open before its last chunk
 * until {@linkcode MockModel.release}, so a test decides exactly when the child goes idle.
 *
 * With `task`, a prompt containing {@linkcode TASK_TRIGGER} makes the model call the tool that
 * starts a child session, whichever the request offers: OpenCode 1.x's `task`
 * (`{description, prompt, subagent_type}`) or 2.x's `subagent` (`{agent, description, prompt,
 * background?}`). The parent's turn streams one `tool_calls` delta, OpenCode starts a child
 * session with `task.prompt`, and the child's turn (its prompt contains `task.prompt`) streams
 * `task.childReply`. The parent's turn after the tool result ends with a short text. This is how
 * a real TUI gets a child without any HTTP call from the test.
 *
 * With `task.children`, the parent's Nth child-starting call (from 0; the last entry repeats)
 * starts a child of that entry's agent whose first turn calls that entry's tool instead (e.g.
 * `bash` under a `"permission": {"bash": "ask"}` config, so the child waits for the user); its
 * turn after the tool's result streams `task.childReply`. The child's prompt is then `task.prompt`
 * and ` #N`. {@linkcode MockModel.childTools} records the tools each child request offered
 * (whether a 1.x child may call `question`).
 *
 * @module
 */

/** The text in a user prompt that makes a `task` model call the child-starting tool. */
export const TASK_TRIGGER = "[[muxbridge-task]]";

/** What a `task` model does (see the module doc). */
export interface MockTask {
  /** The child's prompt (the `task` tool's `prompt` argument). */
  prompt: string;
  /** The child's reply, streamed word by word. */
  childReply: string;
  /** The tool's `description` argument (2.x titles the child with it). @default "muxbridge probe" */
  description?: string;
  /** 2.x only: `subagent`'s `background: true` (the parent's turn ends while the child runs). */
  background?: boolean;
  /**
   * The child's first `times` requests answer HTTP `status` instead of streaming (a 5xx makes
   * OpenCode retry, a 4xx fails the child's turn). @default none
   */
  childFailure?: { status: number; times: number };
  /**
   * While {@linkcode MockModel.hold} holds it, the child streams this word once per chunk
   * delay (a long-running child) instead of pausing. @default none: it pauses
   */
  fillerWhileHeld?: string;
  /**
   * The children the parent's calls start, in turn (the last repeats): each one's agent and the
   * tool its first turn calls. @default one `general` child that calls no tool
   */
  children?: readonly MockChild[];
}

/** A child a call of the parent starts (see {@linkcode MockTask.children}). */
export interface MockChild {
  /** The agent it runs (1.x `subagent_type`, 2.x `agent`). @default "general" */
  agent?: string;
  /**
   * Its first turn calls this tool instead of streaming text; its turn after the tool's result
   * streams {@linkcode MockTask.childReply}. @default none
   */
  tool?: ToolCall;
}

/** Options of {@linkcode startMockModel}. */
export interface MockModelOptions {
  /** Delay before each word chunk. @default 50 */
  chunkDelayMs?: number;
  /** The reply. @default "Hello from the mock model." */
  reply?: string;
  /** Call the `task` tool on {@linkcode TASK_TRIGGER} (see the module doc). */
  task?: MockTask;
}

/** A running mock model server. */
export interface MockModel {
  /** Its port on 127.0.0.1. */
  port: number;
  /** The provider `baseURL` (`http://127.0.0.1:<port>/v1`). */
  baseUrl: string;
  /** Streaming requests started so far. */
  readonly streams: number;
  /** Streams waiting at the gate now. */
  readonly held: number;
  /**
   * Streamed turns that ended, in order: `task` (a tool call), `child` (the task's child) or
   * `reply`, with `performance.now()` at their last chunk.
   */
  readonly ended: ReadonlyArray<{ kind: "task" | "child" | "reply"; at: number }>;
  /** The tool names each child request offered, in request order. */
  readonly childTools: ReadonlyArray<readonly string[]>;
  /** Sets the per-chunk delay for later streams. */
  setChunkDelay(ms: number): void;
  /**
   * From now on, streams stop before their last chunk (a child's tool call: before it) until
   * {@linkcode MockModel.release}.
   */
  hold(): void;
  /** Lets every held stream finish, and stops holding new ones. */
  release(): void;
  /** Releases held streams and stops the server. */
  close(): Promise<void>;
}

/** One message's text, whether `content` is a string or an array of parts. */
function messageText(message: unknown): string {
  const content = (message as { content?: unknown } | null)?.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
}

/** The tools that start a child session: OpenCode 1.x's `task`, 2.x's `subagent`. */
export type ChildTool = "task" | "subagent";

/** A tool call the mock streams: the tool's name and its arguments. */
export interface ToolCall {
  /** `task` or `subagent`, or a child's tool (`bash`, `question`, …). */
  name: string;
  /** The arguments, in the shape that OpenCode line's tool takes. */
  arguments: Record<string, unknown>;
}

/**
 * Which child-starting tool a chat-completions request offers.
 *
 * @param tools The request's `tools`.
 * @returns `subagent` (2.x), `task` (1.x), or null when it offers neither.
 */
export function offeredChildTool(tools: unknown): ChildTool | null {
  const names = new Set(
    (Array.isArray(tools) ? tools : []).map((t) =>
      (t as { function?: { name?: unknown } } | null)?.function?.name
    ),
  );
  return names.has("subagent") ? "subagent" : names.has("task") ? "task" : null;
}

/** The names of the tools a request offers. */
export function toolNames(tools: unknown): string[] {
  return (Array.isArray(tools) ? tools : []).flatMap((t) => {
    const name = (t as { function?: { name?: unknown } } | null)?.function?.name;
    return typeof name === "string" ? [name] : [];
  });
}

/**
 * Which child of the task a request is a turn of (its user text holds the task's prompt, then
 * ` #N`), or null for the parent.
 */
export function childTurn(body: { messages?: unknown[] }, task: MockTask): number | null {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const text = messages.filter((m) => (m as { role?: string })?.role === "user")
    .map(messageText).join("\n");
  const at = text.indexOf(task.prompt);
  if (at < 0) return null;
  return Number(/^ #(\d+)/.exec(text.slice(at + task.prompt.length))?.[1] ?? 0);
}

/** The child the Nth call of the parent starts. */
function childOf(task: MockTask, n: number): MockChild {
  const children = task.children ?? [];
  return children[Math.min(n, children.length - 1)] ?? {};
}

/**
 * What a streamed turn of a `task` model says.
 *
 * @param body The chat-completions request (its `messages` and `tools`).
 * @param task The `task` settings.
 * @param calls How many children the parent started before (which one the next call starts).
 * @returns A call of the offered child-starting tool (the parent's first turn) or of a child's
 *   own tool (its first turn, {@linkcode MockTask.children}), text (the child's turn, or the
 *   parent's turn after the tool result), or null for the default reply.
 *
 * @example The 2.x tool when the request offers it
 * ```ts
 * import { taskTurn, TASK_TRIGGER } from "./mock_model.ts";
 * const turn = taskTurn({
 *   messages: [{ role: "user", content: `${TASK_TRIGGER} go` }],
 *   tools: [{ type: "function", function: { name: "subagent" } }],
 * }, { prompt: "child: count", childReply: "one two" });
 * console.assert(turn !== null && "tool" in turn && turn.tool.name === "subagent");
 * ```
 */
export function taskTurn(
  body: { messages?: unknown[]; tools?: unknown[] },
  task: MockTask,
  calls = 0,
): { tool: ToolCall } | { text: string } | null {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1) as { role?: string } | undefined;
  const offered = offeredChildTool(body.tools);
  const child = childTurn(body, task);
  if (child !== null) {
    const tool = childOf(task, child).tool;
    return tool && last?.role !== "tool" && toolNames(body.tools).includes(tool.name)
      ? { tool }
      : { text: task.childReply };
  }
  if (last?.role === "tool") return { text: "The child is done." };
  if (last?.role === "user" && offered && messageText(last).includes(TASK_TRIGGER)) {
    const description = task.description ?? "muxbridge probe";
    // Each child of `children` is told its number; without them the prompt is as given.
    const prompt = task.children ? `${task.prompt} #${calls}` : task.prompt;
    const agent = childOf(task, calls).agent ?? "general";
    return {
      tool: offered === "task"
        ? {
          name: "task",
          arguments: { description, prompt, subagent_type: agent },
        }
        : {
          name: "subagent",
          arguments: {
            agent,
            description,
            prompt,
            ...(task.background ? { background: true } : {}),
          },
        },
    };
  }
  return null;
}

/**
 * Starts the mock model server on 127.0.0.1 (a free port).
 *
 * @param options Delay, reply and `task` mode.
 * @returns The server; always `await close()`.
 */
export function startMockModel(options: MockModelOptions = {}): MockModel {
  let delay = options.chunkDelayMs ?? 50;
  const reply = options.reply ?? "Hello from the mock model.";
  let streams = 0;
  let held = 0;
  let childFailures = 0;
  /** Children the parent started so far. */
  let calls = 0;
  const childTools: string[][] = [];
  const ended: Array<{ kind: "task" | "child" | "reply"; at: number }> = [];
  let gate: { promise: Promise<void>; open: () => void } | null = null;
  // Pending delays, so that close() can end them at once instead of waiting them out.
  const sleepers = new Map<ReturnType<typeof setTimeout>, () => void>();
  let closed = false;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (closed) return resolve();
      const t = setTimeout(() => {
        sleepers.delete(t);
        resolve();
      }, ms);
      sleepers.set(t, resolve);
    });

  const handler = async (req: Request): Promise<Response> => {
    const url = new URL(req.url);
    if (req.method !== "POST" || !url.pathname.endsWith("/chat/completions")) {
      return new Response("{}", { status: 404 });
    }
    const body = await req.json().catch(() => ({}));
    const base = { id: "chatcmpl-mock", created: Math.floor(Date.now() / 1000), model: body.model };
    const usage = { prompt_tokens: 10, completion_tokens: 6, total_tokens: 16 };
    if (!body.stream) {
      return Response.json({
        ...base,
        object: "chat.completion",
        choices: [{
          index: 0,
          message: { role: "assistant", content: reply },
          finish_reason: "stop",
        }],
        usage,
      });
    }
    const turn = options.task ? taskTurn(body, options.task, calls) : null;
    const child = options.task !== undefined && childTurn(body, options.task) !== null;
    if (child) childTools.push(toolNames(body.tools));
    if (turn && "tool" in turn && !child) calls++;
    const kind = child || (turn && "text" in turn && turn.text === options.task?.childReply)
      ? "child"
      : turn && "tool" in turn
      ? "task"
      : "reply";
    const failure = options.task?.childFailure;
    if (kind === "child" && failure && childFailures < failure.times) {
      childFailures++;
      return Response.json(
        { error: { message: "mock model failure", type: "mock_error", code: failure.status } },
        { status: failure.status },
      );
    }
    streams++;
    const words = (turn && "text" in turn ? turn.text : reply).split(" ");
    const myGate = gate;
    let cancelled = false;
    const enc = new TextEncoder();
    const stream = new ReadableStream<Uint8Array>({
      async start(controller) {
        const send = (o: Record<string, unknown>) => {
          if (cancelled) return;
          controller.enqueue(
            enc.encode(
              `data: ${JSON.stringify({ ...base, object: "chat.completion.chunk", ...o })}\n\n`,
            ),
          );
        };
        send({ choices: [{ index: 0, delta: { role: "assistant", content: "" } }] });
        if (turn && "tool" in turn) {
          if (myGate && child) {
            // A held child calls its tool only once released (its pane may attach first).
            held++;
            await myGate.promise;
            held--;
          }
          send({
            choices: [{
              index: 0,
              delta: {
                tool_calls: [{
                  index: 0,
                  id: `call_${streams}`,
                  type: "function",
                  function: {
                    name: turn.tool.name,
                    arguments: JSON.stringify(turn.tool.arguments),
                  },
                }],
              },
              finish_reason: null,
            }],
          });
          send({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] });
          send({ choices: [], usage });
          // A child's tool call is no end of its turn: its reply follows the tool's result.
          if (!child) ended.push({ kind, at: performance.now() });
          if (!cancelled) {
            controller.enqueue(enc.encode("data: [DONE]\n\n"));
            controller.close();
          }
          return;
        }
        for (const word of words) {
          await sleep(delay);
          send({ choices: [{ index: 0, delta: { content: `${word} ` }, finish_reason: null }] });
        }
        if (myGate) {
          held++;
          const filler = kind === "child" ? options.task?.fillerWhileHeld : undefined;
          if (filler === undefined) await myGate.promise;
          else {
            // A long-running child: it keeps streaming until the gate opens.
            let open = false;
            myGate.promise.then(() => (open = true));
            while (!open && !closed && !cancelled) {
              await sleep(delay);
              if (!open) {
                send({
                  choices: [{ index: 0, delta: { content: `${filler} ` }, finish_reason: null }],
                });
              }
            }
          }
          held--;
        }
        send({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] });
        send({ choices: [], usage });
        ended.push({ kind, at: performance.now() });
        if (!cancelled) {
          controller.enqueue(enc.encode("data: [DONE]\n\n"));
          controller.close();
        }
      },
      cancel() {
        cancelled = true;
      },
    });
    return new Response(stream, { headers: { "content-type": "text/event-stream" } });
  };

  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  const port = server.addr.port;
  const release = () => {
    gate?.open();
    gate = null;
  };
  return {
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get streams() {
      return streams;
    },
    get held() {
      return held;
    },
    ended,
    childTools,
    setChunkDelay: (ms) => (delay = ms),
    hold() {
      if (gate) return;
      let open!: () => void;
      const promise = new Promise<void>((resolve) => (open = resolve));
      gate = { promise, open };
    },
    release,
    async close() {
      closed = true;
      release();
      for (const [t, resolve] of sleepers) {
        clearTimeout(t);
        resolve();
      }
      sleepers.clear();
      await server.shutdown();
    },
  };
}
