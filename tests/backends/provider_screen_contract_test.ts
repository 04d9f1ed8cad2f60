/**
 * The backend contract through the pane-provider protocol against real GNU screen: the provider
 * backend talking to the example screen provider (`examples/providers/screen/provider.ts`) on a
 * private session (its own SCREENDIR, a unique name, `-X quit` at the end).
 */

import { createProviderBackend } from "../../backends/provider/backend.ts";
import { startScreenSession } from "../helpers/screen_session.ts";
import { tool } from "../helpers/requires.ts";
import { backendContract } from "./_contract.ts";
import { answerFault, losingOpener } from "./_lost_answer.ts";
import { denoProvider, openerWith, providerDeps, SCREEN_PROVIDER } from "./provider_fixture.ts";

backendContract("provider (screen example, real GNU screen)", async () => {
  const session = await startScreenSession();
  const answers = answerFault();
  const backend = createProviderBackend(
    providerDeps(
      denoProvider(SCREEN_PROVIDER, ["--session", session.name, "--state-dir", session.stateDir]),
    ),
    { open: losingOpener(openerWith(session.env), answers, (line) => line.includes('"spawn"')) },
  );
  try {
    await backend.probe();
  } catch (err) {
    await backend.dispose?.();
    await session.close();
    throw err;
  }
  return {
    backend,
    dir: session.dir,
    answers,
    paneIds: () => session.windows(),
    async close() {
      await backend.dispose?.();
      await session.close();
    },
  };
}, { requires: [tool("screen")] });
