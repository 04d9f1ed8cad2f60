/**
 * The backend contract against the fake cmux CLI (`tests/fakes/bin/cmux`): cmux is a macOS app
 * and cannot run here, so this checks muxbridge against the shapes cmux's source prints, not the
 * program.
 */

import { createCmuxBackend } from "../../backends/cmux/backend.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { backendContract } from "./_contract.ts";
import { answerFault, losingRunner } from "./_lost_answer.ts";
import { startFakeCmux } from "./cmux_fixture.ts";

backendContract("cmux (fake CLI)", async () => {
  const fake = await startFakeCmux();
  const answers = answerFault();
  const run = losingRunner(
    fake.runner,
    answers,
    (argv) => argv.includes("new-split") && !argv.includes("--help"),
  );
  return {
    backend: createCmuxBackend(fake.deps({}, silentLogger, run)),
    dir: fake.dir,
    answers,
    // The fake's state, not the backend's parser (a reaped surface is gone from it too once
    // the next call ran; `tree` is that call).
    async paneIds() {
      await fake.runner(
        [fake.deps().config.cmux.bin, "--socket", fake.socket, "--json", "tree", "--all"],
        { timeoutMs: 10_000 },
      );
      return fake.read().windows.flatMap((w) =>
        w.workspaces.flatMap((ws) => ws.panes.flatMap((p) => p.surfaces.map((s) => s.id)))
      );
    },
    restart: () => Promise.resolve(fake.restart()),
    userPane: () => fake.userPane(),
    close: () => fake.close(),
  };
});
