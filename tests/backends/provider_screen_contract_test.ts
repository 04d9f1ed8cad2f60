/**
 * The backend contract through the pane-provider protocol against real GNU screen: the provider
 * backend talking to the example screen provider (`examples/providers/screen/provider.ts`) on a
 * private session (its own SCREENDIR, a unique name, `-X quit` at the end).
 */

import { startScreenSession } from "../helpers/screen_session.ts";
import { tool } from "../helpers/requires.ts";
import { backendContract } from "./_contract.ts";
import { exampleProviderFixture, SCREEN_PROVIDER } from "./provider_fixture.ts";

backendContract("provider (screen example, real GNU screen)", async () => {
  const session = await startScreenSession();
  return exampleProviderFixture(SCREEN_PROVIDER, [
    "--session",
    session.name,
    "--state-dir",
    session.stateDir,
  ], {
    env: session.env,
    dir: session.dir,
    paneIds: () => session.windows(),
    restart: () => session.restart(),
    userPane: () => session.userWindow(),
    // The example provider makes its ids unique (`<number>.<launch id>`): they never come back.
    idsRepeat: false,
    close: () => session.close(),
  });
}, { requires: [tool("screen")] });
