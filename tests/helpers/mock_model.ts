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
 * With `task`, a prompt containing {@linkcode TASK_TRIGGER} makes the model call OpenCode's `task`
 * tool (when the request offers it): the parent's turn streams one `tool_calls` delta, OpenCode
 * starts a child session with `task.prompt`, and the child's turn (its prompt starts with
 * `task.prompt`) streams `task.childReply`. The parent's turn after the tool result ends with a
 * short text. This is how a real TUI gets a child without any HTTP call from the test.
 *
 * With `task.children`, the parent's Nth `task` call (from 0; the last entry repeats) starts a
 * child of that entry's agent whose first turn calls that entry's tool instead (e.g. `bash` under
 * a `"permission": {"bash": "ask"}` config, so the child waits for the user); its turn after the
 * tool's result streams `task.childReply`. The child's prompt is `task.prompt` and ` #N`.
 * {@linkcode MockModel.childTools} records the tools each child request offered (whether a 1.x
 * child may call `question`).
 *
 * @module
 */

/** The text in a user prompt that makes a `task` model call the `task` tool. */
export const TASK_TRIGGER = "[[muxbridge-task]]";

/** What a `task` model does (see the module doc). */
export interface MockTask {
  /** The child's prompt (the `task` tool's `prompt` argument). */
  prompt: string;
  /** The child's reply, streamed word by word. */
  childReply: string;
  /** The `task` tool's `description` argument. @default "muxbridge probe" */
  description?: string;
  /**
   * While {@linkcode MockModel.hold} holds it, the child streams this word once per chunk
   * delay (a long-running child) instead of pausing. @default none: it pauses
   */
  fillerWhileHeld?: string;
  /**
   * The children the parent's `task` calls start, in turn (the last repeats): each one's agent
   * and the tool its first turn calls. @default one `general` child that calls no tool
   */
  children?: readonly MockChild[];
}

/** A child a `task` call starts (see {@linkcode MockTask.children}). */
export interface MockChild {
  /** The `task` tool's `subagent_type` argument. @default "general" */
  agent?: string;
  /**
   * The child's first turn calls this tool (its name and arguments) instead of streaming text;
   * its turn after the tool's result streams {@linkcode MockTask.childReply}. @default none
   */
  tool?: MockToolCall;
}

/** A tool call the mock model streams. */
export interface MockToolCall {
  /** The tool's name (`bash`, `question`, `task`). */
  name: string;
  /** Its arguments. */
  args: Record<string, unknown>;
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
  /** `performance.now()` when each of the child's tool calls finished streaming. */
  readonly childCalls: readonly number[];
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

/** The names of the tools a request offers. */
export function toolNames(body: { tools?: unknown[] }): string[] {
  return (body.tools ?? []).flatMap((t) => {
    const name = (t as { function?: { name?: unknown } })?.function?.name;
    return typeof name === "string" ? [name] : [];
  });
}

/**
 * Which child of the task a request is a turn of (its user text holds the task's prompt and the
 * child's number), or null for the parent.
 */
export function childTurn(body: { messages?: unknown[] }, task: MockTask): number | null {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const text = messages.filter((m) => (m as { role?: string })?.role === "user")
    .map(messageText).join("\n");
  const at = text.indexOf(task.prompt);
  if (at < 0) return null;
  return Number(/^ #(\d+)/.exec(text.slice(at + task.prompt.length))?.[1] ?? 0);
}

/** The child the Nth `task` call starts. */
function childOf(task: MockTask, n: number): MockChild {
  const children = task.children ?? [];
  return children[Math.min(n, children.length - 1)] ?? {};
}

/**
 * What a streamed turn of a `task` model says.
 *
 * @param body The chat-completions request (its `messages` and `tools`).
 * @param task The `task` settings.
 * @param calls How many `task` calls the parent made before (which child the next one starts).
 * @returns A tool call (the parent's first turn calls `task`; a child's first turn calls its
 *   tool, when it has one), text (the child's turn, or the parent's turn after the tool result),
 *   or null for the default reply.
 */
export function taskTurn(
  body: { messages?: unknown[]; tools?: unknown[] },
  task: MockTask,
  calls = 0,
): { call: MockToolCall } | { text: string } | null {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1) as { role?: string } | undefined;
  const child = childTurn(body, task);
  if (child !== null) {
    const tool = childOf(task, child).tool;
    return tool && last?.role !== "tool" && toolNames(body).includes(tool.name)
      ? { call: tool }
      : { text: task.childReply };
  }
  if (last?.role === "tool") return { text: "The child is done." };
  if (
    last?.role === "user" && toolNames(body).includes("task") &&
    messageText(last).includes(TASK_TRIGGER)
  ) {
    return {
      call: {
        name: "task",
        args: {
          description: task.description ?? "muxbridge probe",
          prompt: `${task.prompt} #${calls}`,
          subagent_type: childOf(task, calls).agent ?? "general",
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
  const ended: Array<{ kind: "task" | "child" | "reply"; at: number }> = [];
  const childTools: string[][] = [];
  let taskCalls = 0;
  const childCalls: number[] = [];
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
    streams++;
    const turn = options.task ? taskTurn(body, options.task, taskCalls) : null;
    const child = options.task !== undefined && childTurn(body, options.task) !== null;
    if (child) childTools.push(toolNames(body));
    if (turn && "call" in turn && !child) taskCalls++;
    const kind = turn && "call" in turn
      ? (child ? "child" : "task")
      : turn && options.task && turn.text === options.task.childReply
      ? "child"
      : "reply";
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
        if (turn && "call" in turn) {
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
                  function: { name: turn.call.name, arguments: JSON.stringify(turn.call.args) },
                }],
              },
              finish_reason: null,
            }],
          });
          send({ choices: [{ index: 0, delta: {}, finish_reason: "tool_calls" }] });
          send({ choices: [], usage });
          if (child) childCalls.push(performance.now());
          else ended.push({ kind, at: performance.now() });
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
    childCalls,
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
