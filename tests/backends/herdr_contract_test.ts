/**
 * The backend contract against the fake herdr (version 0.9.1, the user's shell /bin/sh), once
 * through the fake CLI (`tests/fakes/bin/herdr`: `herdr.transport` auto with a socket file nothing
 * listens on, so every command is a process) and once through the fake API socket server
 * (`tests/fakes/herdr_socket.ts`, `herdr.transport: socket`, so nothing falls back silently). Both
 * fakes answer from one pane model and state file. herdr cannot be installed here, so this is
 * verified against the fakes only.
 */

import { unixRequest } from "../../lib/sys/unix_request.ts";
import { backendContract } from "./_contract.ts";
import { answerFault, losingRequester, losingRunner } from "./_lost_answer.ts";
import { FAKE_HERDR, type FakeHerdr, startFakeHerdr } from "./herdr_fixture.ts";

/** The fake's own pane listing (`herdr pane list`), not the backend's parser. */
async function paneIds(server: FakeHerdr): Promise<string[]> {
  const r = await server.runner([FAKE_HERDR, "pane", "list"], {
    timeoutMs: 10_000,
    env: { HERDR_SOCKET_PATH: server.socket },
  });
  return (JSON.parse(r.stdout) as { result: { panes: Array<{ pane_id: string }> } }).result.panes
    .map((p) => p.pane_id);
}

const splits = (argv: readonly string[]) => argv.includes("pane") && argv.includes("split");

backendContract("herdr (fake CLI)", async () => {
  const server = await startFakeHerdr();
  // The server's socket is there (its file tells the server apart), but nothing answers on it.
  await server.leaveSocketFile();
  const answers = answerFault();
  return {
    backend: server.backend({}, undefined, undefined, {
      run: losingRunner(server.runner, answers, splits),
    }),
    dir: server.dir,
    answers,
    paneIds: () => paneIds(server),
    restart: () => server.restart(),
    userPane: () => server.userPane(),
    close: () => server.close(),
  };
});

backendContract("herdr (fake socket)", async () => {
  const server = await startFakeHerdr({ socket: true });
  const answers = answerFault();
  return {
    backend: server.backend({ herdr: { transport: "socket" } }, undefined, undefined, {
      unixRequest: losingRequester(unixRequest, answers, (line) => line.includes('"pane.split"')),
    }),
    dir: server.dir,
    answers,
    paneIds: () => paneIds(server),
    restart: () => server.restart(),
    userPane: () => server.userPane(),
    close: () => server.close(),
  };
});
