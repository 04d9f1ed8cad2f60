/**
 * The baseline process of `throughput.ts`: reads stdin through the same `node:process` stream
 * the bridge uses, splits lines and runs `JSON.parse` on each, and writes `ready` and `bye` lines
 * like the bridge.
 *
 * @module
 */

import process from "node:process";

process.stdout.write('{"type":"ready"}\n');
const decoder = new TextDecoder();
let text = "";
let seen = 0;
for await (const chunk of process.stdin as unknown as AsyncIterable<Uint8Array>) {
  text += decoder.decode(chunk, { stream: true });
  const lines = text.split("\n");
  text = lines.pop() ?? "";
  for (const line of lines) {
    if (line !== "" && typeof JSON.parse(line).type === "string") seen++;
  }
}
process.stdout.write(`{"type":"bye","seen":${seen}}\n`);
