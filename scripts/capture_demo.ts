/**
 * Captures a real run of `muxbridge demo` into the `demo` block (docs/development.md), so that the
 * transcript and pictures the docs show are what the program prints (`tests/docs/readme_demo_test.ts`
 * runs the demo again and compares everything but the tmux version and the socket path).
 *
 * Usage: deno run -A scripts/capture_demo.ts [-- CMD...]   (default CMD: deno run -A main.ts)
 *
 * @module
 */

import { writeDocBlock } from "./_readme_blocks.ts";

/**
 * The demo's transcript as the docs show it.
 *
 * @param stdout What `muxbridge demo` printed.
 * @returns The block body: the transcript in a text fence.
 */
export function demoBlock(stdout: string): string {
  return ["```text", stdout.trimEnd(), "```"].join("\n");
}

/**
 * The parts of a demo transcript that differ between machines and runs (the tmux version and
 * the private socket's path), replaced by placeholders.
 *
 * @param transcript A transcript.
 * @returns The stable part.
 */
export function stableDemo(transcript: string): string {
  return transcript.replace(
    /\(tmux [^,]+, private server -S [^)]+\)/,
    "(tmux <version>, private server -S <socket>)",
  );
}

if (import.meta.main) {
  const dash = Deno.args.indexOf("--");
  const root = new URL("../", import.meta.url).pathname;
  const cmd = dash >= 0
    ? Deno.args.slice(dash + 1)
    : [Deno.execPath(), "run", "--allow-all", "--quiet", `${root}main.ts`];
  const out = await new Deno.Command(cmd[0], {
    args: [...cmd.slice(1), "demo"],
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).output();
  if (!out.success) {
    console.error(`muxbridge demo exited ${out.code}; the demo block is left as it was`);
    Deno.exit(1);
  }
  const { file, changed } = writeDocBlock("demo", demoBlock(new TextDecoder().decode(out.stdout)));
  console.log(changed ? `${file}: demo block rewritten` : `${file}: demo block unchanged`);
}
