/**
 * `mesh-agent`: the node agent process. `mesh-agent run` wraps one in-process agent (agent.ts): it
 * logs one JSON line per event on stderr, `{"msg":"Started agent","metrics":…}` when ready; SIGTERM or
 * SIGINT stops it cleanly (services keep running unless --stop-services-on-exit) and exits 0.
 * Exit codes: 0 clean stop, 1 failed to start or run (e.g. a damaged store), 2 bad usage.
 */
import { createAgent, type AgentOptions } from './agent.ts';
import { parseCommandLine, USAGE } from './cli-args.ts';
import { createJsonLogger } from '../api/meta/logger.ts';

async function main(argv: string[]): Promise<void> {
  let opts: AgentOptions | 'help';
  try {
    opts = parseCommandLine(argv);
  } catch (e) {
    process.stderr.write(`mesh-agent: ${(e as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
  if (opts === 'help') { process.stdout.write(USAGE); return; }
  const logger = createJsonLogger();
  const agent = createAgent({ ...opts, logger });
  try {
    await agent.start();
  } catch (e) {
    logger.error('Failed to start agent', { stateDir: opts.stateDir, error: (e as Error).message });
    await agent.stop().catch(() => {});
    process.exit(1);
  }
  let signalled = false;
  const shutdown = (signal: string): void => {
    if (signalled) { logger.error('Exited without a clean shutdown', { signal }); process.exit(1); }
    signalled = true;
    logger.info('Stopping agent', { signal });
    agent.stop()
      .then(() => process.exit(0))
      .catch((e: unknown) => { logger.error('Failed to stop cleanly', { error: String(e) }); process.exit(1); });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

void main(process.argv.slice(2));
