/**
 * The mock model serves both OpenCode lines: it calls whichever child-starting tool a request
 * offers (1.x `task`, 2.x `subagent`) with that tool's argument shape, and fails a child's
 * requests when told to. The real OpenCode end-to-end tests rely on both.
 */

import assert from "node:assert/strict";
import { offeredChildTool, startMockModel, TASK_TRIGGER, taskTurn } from "./helpers/mock_model.ts";

const task = { prompt: "child: count", childReply: "one two", description: "count" };
const tools = (...names: string[]) =>
  names.map((name) => ({ type: "function", function: { name } }));
const trigger = [{ role: "user", content: `${TASK_TRIGGER} go` }];

Deno.test("offeredChildTool prefers subagent, then task, else none", () => {
  assert.deepEqual(offeredChildTool(tools("read", "subagent", "task")), "subagent");
  assert.deepEqual(offeredChildTool(tools("read", "task")), "task");
  assert.deepEqual(offeredChildTool(tools("read")), null);
  assert.deepEqual(offeredChildTool(undefined), null);
  assert.deepEqual(offeredChildTool([null, 3, { function: null }]), null);
});

Deno.test("a 1.x request gets a task call with description, prompt and subagent_type", () => {
  assert.deepEqual(taskTurn({ messages: trigger, tools: tools("task") }, task), {
    tool: {
      name: "task",
      arguments: { description: "count", prompt: "child: count", subagent_type: "general" },
    },
  });
});

Deno.test("a 2.x request gets a subagent call, background only when asked", () => {
  assert.deepEqual(taskTurn({ messages: trigger, tools: tools("subagent") }, task), {
    tool: {
      name: "subagent",
      arguments: { agent: "general", description: "count", prompt: "child: count" },
    },
  });
  const bg = taskTurn({ messages: trigger, tools: tools("subagent") }, {
    ...task,
    background: true,
  });
  assert.deepEqual(bg && "tool" in bg ? bg.tool.arguments.background : undefined, true);
});

Deno.test("the child's turn, the turn after the tool result and other prompts", () => {
  const child = [{
    role: "user",
    content: [{ type: "text", text: "You are a subagent.\nchild: count" }],
  }];
  assert.deepEqual(taskTurn({ messages: child, tools: tools("subagent") }, task), {
    text: "one two",
  });
  assert.deepEqual(
    taskTurn(
      { messages: [...trigger, { role: "tool", content: "ok" }], tools: tools("task") },
      task,
    ),
    { text: "The child is done." },
  );
  assert.deepEqual(
    taskTurn({ messages: [{ role: "user", content: "hi" }], tools: tools("task") }, task),
    null,
  );
  assert.deepEqual(taskTurn({ messages: trigger, tools: tools("read") }, task), null);
});

Deno.test("childFailure answers the child's first requests with the status, then streams", async () => {
  const mock = startMockModel({
    chunkDelayMs: 0,
    task: { ...task, childFailure: { status: 503, times: 2 } },
  });
  try {
    const ask = async (content: string) => {
      const res = await fetch(`${mock.baseUrl}/chat/completions`, {
        method: "POST",
        body: JSON.stringify({ stream: true, messages: [{ role: "user", content }] }),
      });
      await res.body?.cancel();
      return res.status;
    };
    assert.deepEqual(await ask("hello"), 200); // not the child: never failed
    assert.deepEqual([await ask("child: count"), await ask("child: count")], [503, 503]);
    assert.deepEqual(await ask("child: count"), 200);
    assert.deepEqual(mock.streams, 2);
  } finally {
    await mock.close();
  }
});

Deno.test("taskTurn() starts each of task.children in turn, numbered, and a child's first turn calls its tool", () => {
  const children = [
    { tool: { name: "bash", arguments: { command: "echo hi", description: "hi" } } },
    { agent: "asker", tool: { name: "question", arguments: { questions: [] } } },
  ];
  const withChildren = { ...task, children };
  const parent = (calls: number) =>
    taskTurn({ messages: trigger, tools: tools("task") }, withChildren, calls);
  assert.deepEqual(parent(0), {
    tool: {
      name: "task",
      arguments: { description: "count", prompt: "child: count #0", subagent_type: "general" },
    },
  });
  assert.deepEqual(parent(5), {
    tool: {
      name: "task",
      arguments: { description: "count", prompt: "child: count #5", subagent_type: "asker" },
    },
  });
  const childAsks = (n: number, offered: string[]) =>
    taskTurn({
      messages: [{ role: "user", content: `child: count #${n}` }],
      tools: offered.map((name) => ({ type: "function", function: { name } })),
    }, withChildren);
  assert.deepEqual(childAsks(0, ["bash", "read"]), { tool: children[0].tool });
  assert.deepEqual(childAsks(1, ["bash", "question"]), { tool: children[1].tool });
  // A tool the request does not offer is not called: the child replies instead.
  assert.deepEqual(childAsks(1, ["bash"]), { text: "one two" });
  // After the tool's result, the child replies.
  assert.deepEqual(
    taskTurn({
      messages: [{ role: "user", content: "child: count #0" }, { role: "tool", content: "hi" }],
      tools: tools("task"),
    }, withChildren),
    { text: "one two" },
  );
});
