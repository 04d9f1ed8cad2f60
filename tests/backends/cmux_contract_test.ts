/**
 * The backend contract against the fake cmux CLI (`tests/fakes/bin/cmux`): cmux is a macOS app
 * and cannot run here, so this checks muxbridge against the documented shapes, not the program.
 */

import { createCmuxBackend } from "../../backends/cmux.ts";
import { backendContract } from "./_contract.ts";
import { startFakeCmux } from "./cmux_fixture.ts";

backendContract("cmux (fake CLI)", async () => {
  const fake = await startFakeCmux();
  return { backend: createCmuxBackend(fake.deps()), dir: fake.dir, close: () => fake.close() };
});
