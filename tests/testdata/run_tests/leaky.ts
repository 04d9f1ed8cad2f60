/**
 * A test that breaks the rule on purpose: it starts `sleep 600` in the background and leaves it
 * running. `tests/tagged_processes_test.ts` runs it through `scripts/run_tests.ts`, which must
 * name the process, stop it and fail. The pid goes to the file named by `LEAKY_PID_FILE`.
 * (Not a `*_test.ts` file: the suite itself never runs it.)
 *
 * @module
 */

Deno.test("leaves a sleep running", async () => {
  const out = await new Deno.Command("sh", {
    args: ["-c", "sleep 600 >/dev/null 2>&1 </dev/null & echo $!"],
    stdout: "piped",
  }).output();
  await Deno.writeTextFile(Deno.env.get("LEAKY_PID_FILE")!, new TextDecoder().decode(out.stdout));
});
