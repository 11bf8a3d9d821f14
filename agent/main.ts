/**
 * `mesh-agent`: the node agent process. `mesh-agent run` wraps one in-process agent (agent.ts): it
 * logs one JSON line per event on stderr, `{"msg":"Started agent","metrics":…}` when ready; SIGTERM or
 * SIGINT stops it cleanly (services keep running unless --stop-services-on-exit) and exits 0; SIGHUP makes it
 * retry every failed resource now (`mesh-agent reconcile --state-dir DIR` sends it: reconcile-command.ts).
 * `mesh-agent join …` joins a mesh with a token first (join-command.ts), then runs the same way. SIGUSR2 asks it
 * to switch to the control-plane URL `mesh-agent set-server URL` left in its state directory (set-server-command.ts).
 * `mesh-agent status --state-dir DIR` prints the node's recovery clock from DIR alone (status-command.ts).
 * Exit codes: 0 clean stop, 1 failed to start or run (e.g. a damaged store) or to join, 2 bad usage.
 */
import { readFileSync, rmSync } from 'node:fs';
import { createAgent, type Agent, type AgentOptions } from './agent.ts';
import { checkServerUrl, setServerCommand, setServerRequestPath, setServerResultPath } from './set-server-command.ts';
import { writeFileAtomic } from '../api/meta/atomic-file.ts';
import { parseCommandLine, USAGE } from './cli-args.ts';
import { joinCommand } from './join-command.ts';
import { reconcileCommand } from './reconcile-command.ts';
import { statusCommand } from './status-command.ts';
import { createJsonLogger, type Logger } from '../api/meta/logger.ts';
import { EXIT_USAGE } from '../api/meta/usage-error.ts';

async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'join') {
    const logger = createJsonLogger();
    const code = await joinCommand(argv.slice(1), { logger, runAgent: (opts) => runAgent(opts, logger) });
    if (code !== 0) process.exit(code);
    return;
  }
  if (argv[0] === 'set-server') {
    process.exitCode = await setServerCommand(argv.slice(1));
    return;
  }
  if (argv[0] === 'status') {
    process.exitCode = await statusCommand(argv.slice(1));
    return;
  }
  if (argv[0] === 'reconcile') {
    process.exitCode = await reconcileCommand(argv.slice(1));
    return;
  }
  let opts: AgentOptions | 'help';
  try {
    opts = parseCommandLine(argv);
  } catch (e) {
    process.stderr.write(`mesh-agent: ${(e as Error).message}\n\n${USAGE}`);
    process.exit(EXIT_USAGE);
  }
  if (opts === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  await runAgent(opts, createJsonLogger());
}

/** Starts the agent and stops it cleanly on SIGTERM/SIGINT (exits 1 when it cannot start). */
async function runAgent(opts: AgentOptions, logger: Logger): Promise<void> {
  const agent = createAgent({ ...opts, logger });
  // Before start: agent.json (which `mesh-agent reconcile` reads) is written during start, and SIGHUP's
  // default action would end the process.
  process.on('SIGHUP', () => {
    logger.info('Received SIGHUP: retrying every failed resource now', { signal: 'SIGHUP' });
    void agent.reconcileNow('SIGHUP');
  });
  process.on('SIGUSR2', () => void answerSetServer(agent, opts.stateDir, logger));
  try {
    await agent.start();
  } catch (e) {
    logger.error('Failed to start agent', { stateDir: opts.stateDir, error: (e as Error).message });
    await agent.stop().catch(() => {});
    process.exit(1);
  }
  let signalled = false;
  const shutdown = (signal: string): void => {
    if (signalled) {
      logger.error('Exited without a clean shutdown', { signal });
      process.exit(1);
    }
    signalled = true;
    logger.info('Stopping agent', { signal });
    agent
      .stop()
      .then(() => process.exit(0))
      .catch((e: unknown) => {
        logger.error('Failed to stop cleanly', { error: String(e) });
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/** SIGUSR2 from `mesh-agent set-server`: switches to the URL in the request file and writes the answer. */
async function answerSetServer(agent: Agent, stateDir: string, logger: Logger): Promise<void> {
  let answer = 'ok';
  try {
    const url = checkServerUrl(readFileSync(setServerRequestPath(stateDir), 'utf8').trim());
    rmSync(setServerRequestPath(stateDir), { force: true });
    await agent.setServer(url);
  } catch (e) {
    answer = `error: ${(e as Error).message}`;
    logger.error('Failed to change the control-plane server', { error: (e as Error).message });
  }
  await writeFileAtomic(setServerResultPath(stateDir), answer + '\n', { mode: 0o600 }).catch(() => {});
}

void main(process.argv.slice(2));
