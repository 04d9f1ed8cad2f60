/**
 * The backend contract through the pane-provider protocol: the provider backend talking to the
 * example tmux provider (`examples/providers/tmux/provider.ts`), which drives a real tmux on a
 * private server. Proves the protocol carries everything a full multiplexer backend does.
 */

import { createProviderBackend } from "../../backends/provider/backend.ts";
import { startTmuxServer } from "../helpers/tmux_server.ts";
import { tool } from "../helpers/requires.ts";
import { backendContract } from "./_contract.ts";
import { answerFault, losingOpener } from "./_lost_answer.ts";
import { denoProvider, openerWith, providerDeps, TMUX_PROVIDER } from "./provider_fixture.ts";

backendContract("provider (tmux example, real tmux)", async () => {
  const server = await startTmuxServer();
  const answers = answerFault();
  const backend = createProviderBackend(
    providerDeps(
      denoProvider(TMUX_PROVIDER, ["-L", server.socketName, "--target", server.anchorPane]),
    ),
    {
      open: losingOpener(openerWith(server.env), answers, (line) => line.includes('"spawn"')),
    },
  );
  // As selectBackend does before any use: the capabilities come from the provider's handshake.
  await backend.probe();
  return {
    backend,
    dir: server.dir,
    answers,
    paneIds: async () =>
      (await server.tmux(["list-panes", "-a", "-F", "#{pane_id}"])).trim().split("\n"),
    async close() {
      await backend.dispose?.();
      await server.close();
    },
  };
}, { requires: [tool("tmux")] });
