/**
 * The backend contract against the fake zellij CLI (`tests/fakes/bin/zellij`, version 0.45.0):
 * zellij cannot be installed here, so this is verified against the fake only.
 */

import { backendContract } from "./_contract.ts";
import { answerFault, losingRunner } from "./_lost_answer.ts";
import { FAKE_SESSION, FAKE_ZELLIJ, startFakeZellij } from "./zellij_fixture.ts";

backendContract("zellij (fake CLI)", async () => {
  const session = await startFakeZellij();
  const answers = answerFault();
  const run = losingRunner(session.runner, answers, (argv) => argv.includes("new-pane"));
  return {
    backend: session.backend({}, undefined, run),
    dir: session.dir,
    answers,
    // The fake's own listing (it drops panes whose program ended), not the backend's parser.
    async paneIds() {
      const r = await session.runner(
        [FAKE_ZELLIJ, "--session", FAKE_SESSION, "action", "list-panes", "--json", "--all"],
        { timeoutMs: 10_000 },
      );
      return (JSON.parse(r.stdout) as Array<{ id: number; is_plugin: boolean }>)
        .filter((p) => !p.is_plugin).map((p) => `terminal_${p.id}`);
    },
    restart: () => session.restart(),
    userPane: () => session.userPane(),
    close: () => session.close(),
  };
});
