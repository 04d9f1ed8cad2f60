/**
 * The backend contract against the fake zellij CLI (`tests/fakes/bin/zellij`, version 0.45.0):
 * zellij cannot be installed here, so this is verified against the fake only.
 */

import { backendContract } from "./_contract.ts";
import { startFakeZellij } from "./zellij_fixture.ts";

backendContract("zellij (fake CLI)", async () => {
  const session = await startFakeZellij();
  return { backend: session.backend(), dir: session.dir, close: () => session.close() };
});
