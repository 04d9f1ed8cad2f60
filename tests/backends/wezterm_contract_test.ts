/**
 * The backend contract against the fake wezterm CLI (`tests/fakes/bin/wezterm`): WezTerm is a
 * GUI terminal and cannot run here, so this checks muxbridge against what wezterm's CLI source
 * prints and does, not the program.
 */

import { createWeztermBackend } from "../../backends/wezterm/backend.ts";
import { backendContract } from "./_contract.ts";
import { answerFault, losingRunner } from "./_lost_answer.ts";
import { startFakeWezterm } from "./wezterm_fixture.ts";

backendContract("wezterm (fake CLI)", async () => {
  const fake = await startFakeWezterm();
  const answers = answerFault();
  const run = losingRunner(fake.runner, answers, (argv) => argv.includes("split-pane"));
  return {
    backend: createWeztermBackend(fake.deps({}, undefined, run)),
    dir: fake.dir,
    answers,
    paneIds: () => Promise.resolve(fake.read().panes.map((p) => String(p.id))),
    restart: () => Promise.resolve(fake.restart()),
    userPane: () => fake.userPane(),
    close: () => fake.close(),
  };
});
