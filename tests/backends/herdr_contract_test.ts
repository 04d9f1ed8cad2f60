/**
 * The backend contract against the fake herdr (version 0.9.1, the user's shell /bin/sh), once
 * through the fake CLI (`tests/fakes/bin/herdr`: `herdr.transport` auto with no socket listening,
 * so every command is a process) and once through the fake API socket server
 * (`tests/fakes/herdr_socket.ts`, `herdr.transport: socket`, so nothing falls back silently). Both
 * fakes answer from one pane model and state file. herdr cannot be installed here, so this is
 * verified against the fakes only.
 */

import { backendContract } from "./_contract.ts";
import { startFakeHerdr } from "./herdr_fixture.ts";

backendContract("herdr (fake CLI)", async () => {
  const server = await startFakeHerdr();
  return { backend: server.backend(), dir: server.dir, close: () => server.close() };
});

backendContract("herdr (fake socket)", async () => {
  const server = await startFakeHerdr({ socket: true });
  return {
    backend: server.backend({ herdr: { transport: "socket" } }),
    dir: server.dir,
    close: () => server.close(),
  };
});
