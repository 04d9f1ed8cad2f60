/**
 * The backend contract against the fake herdr CLI (`tests/fakes/bin/herdr`, version 0.9.1, the
 * user's shell /bin/sh): herdr cannot be installed here, so this is verified against the fake
 * only.
 */

import { backendContract } from "./_contract.ts";
import { startFakeHerdr } from "./herdr_fixture.ts";

backendContract("herdr (fake CLI)", async () => {
  const server = await startFakeHerdr();
  return { backend: server.backend(), dir: server.dir, close: () => server.close() };
});
