/**
 * The backend contract against the real tmux with `tmux.control_mode` on: commands go over a
 * control-mode channel while panes open, and through processes once panes are being closed.
 *
 * A lost answer is made at the channel: `garbage` replaces the output of the split's answer
 * block, `timeout` stops the tmux server (SIGSTOP) as the split is written and lets it go on
 * after the command timeout, so tmux really carries the split out late.
 */

import { createTmuxBackend } from "../../backends/tmux.ts";
import type { ChannelOpener } from "../../lib/sys/channel.ts";
import { createRealClock } from "../../lib/sys/clock.ts";
import { resolveConfig } from "../../lib/config.ts";
import { silentLogger } from "../../lib/sys/log.ts";
import { startTmuxServer } from "../helpers/tmux_server.ts";
import { backendContract } from "./_contract.ts";
import { answerFault, losingRunner } from "./_lost_answer.ts";
import { opensPane } from "./tmux_contract_test.ts";

const TIMEOUT_MS = 2000;

backendContract("tmux (control mode)", async () => {
  const server = await startTmuxServer();
  const answers = answerFault();
  let resume: ReturnType<typeof setTimeout> | undefined;
  const goOn = () => {
    if (resume === undefined) return;
    clearTimeout(resume);
    resume = undefined;
    Deno.kill(server.serverPid, "SIGCONT");
  };
  const openChannel: ChannelOpener = (argv, options) => {
    let mangle = false;
    let inside = false;
    const channel = server.openChannel(argv, {
      ...options,
      onLine(line) {
        if (mangle && !inside && /^%begin \d+ \d+ 1$/.test(line)) inside = true;
        else if (inside && /^%(end|error) \d+ \d+ 1$/.test(line)) inside = mangle = false;
        else if (inside) return options.onLine("<<the answer was lost>>");
        options.onLine(line);
      },
    });
    return {
      get pid() {
        return channel.pid;
      },
      write(text) {
        const mode = answers.next;
        if (mode !== null && opensPane([], text)) {
          answers.next = null;
          if (mode === "garbage") mangle = true;
          else {
            Deno.kill(server.serverPid, "SIGSTOP");
            resume = setTimeout(goOn, TIMEOUT_MS + 500);
          }
        }
        return channel.write(text);
      },
      end: () => channel.end(),
      kill: (signal) => channel.kill(signal),
    };
  };
  const config = resolveConfig({
    env: () => undefined,
    flags: {
      backend: "tmux",
      command_timeout_ms: TIMEOUT_MS,
      tmux: { socket_name: server.socketName, target: server.anchorPane, control_mode: true },
    },
  });
  const backend = createTmuxBackend({
    // Commands that end panes go through processes: the fault follows them there too.
    run: losingRunner(server.runner, answers, opensPane),
    openChannel,
    env: (name) => server.env[name],
    clock: createRealClock(),
    config,
    identity: { backend: null, layers: [], harness: { name: null } },
    log: silentLogger,
  });
  return {
    backend,
    dir: server.dir,
    answers,
    paneIds: async () =>
      (await server.tmux(["list-panes", "-a", "-F", "#{pane_id}"])).trim().split("\n"),
    close: async () => {
      goOn();
      await backend.dispose?.();
      await server.close();
    },
  };
});
