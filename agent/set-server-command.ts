/**
 * `mesh-agent set-server URL --state-dir DIR`: points the node's agent at the control plane's new address (after
 * a restore onto another machine), keeping its CA pin and credential — no re-join. When the agent of DIR runs
 * (its agent.json pid is still that process), the command leaves the URL in `DIR/set-server.request`, sends the
 * agent SIGUSR2 and waits for its answer in `DIR/set-server.result` (main.ts: the agent saves the URL and
 * restarts in process; its services keep running). When no agent runs, it writes the URL into the agent's
 * store itself, for the next start. Exit codes: 0 done, 1 failed, 2 bad usage.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomic } from '../api/meta/atomic-file.ts';
import { createJsonLogger, silentLogger } from '../api/meta/logger.ts';
import { parseArgs, unknownOption, type FlagSpec } from '../api/meta/flags.ts';
import { EXIT_USAGE, UsageError } from '../api/meta/usage-error.ts';
import { readAgentInfo } from './agent-info.ts';
import { isSameProcess } from './drivers/process-record.ts';
import { openAgentStore } from './store/agent-store.ts';

/** The help text of `mesh-agent set-server`. */
export const SET_SERVER_USAGE = `Usage: mesh-agent set-server URL --state-dir DIR

Points the agent of state directory DIR at the control plane at URL (e.g. https://198.18.0.7:6443 after a
restore onto a new machine). The agent keeps its CA pin and credential: it reconnects without re-joining. A
running agent is told at once (SIGUSR2) and restarts in process, its services untouched; otherwise the URL is
saved for its next start. With a DNS name in the server URL, moving the name needs no command at all.

Flags:
  --state-dir DIR   the agent's state directory (required)
  -h, --help        show this help
`;

const FLAGS: FlagSpec[] = [
  { name: 'state-dir', type: 'string' },
  { name: 'help', short: 'h', type: 'boolean' },
];

/** The request file a running agent reads on SIGUSR2. */
export function setServerRequestPath(stateDir: string): string {
  return join(stateDir, 'set-server.request');
}

/** The agent's answer to a request: `ok` or `error: …`. */
export function setServerResultPath(stateDir: string): string {
  return join(stateDir, 'set-server.result');
}

const ANSWER_TIMEOUT_MS = 60_000;

/** Checks a control-plane URL; throws a UsageError naming what is wrong. */
export function checkServerUrl(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new UsageError(`"${text}" is not a URL (e.g. https://198.18.0.7:6443)`);
  }
  if (u.protocol !== 'https:' && u.protocol !== 'http:') throw new UsageError(`"${text}" must be an https:// URL`);
  return text.replace(/\/$/, '');
}

/** Runs `mesh-agent set-server …` (the words after `set-server`); resolves with the exit code. */
export async function setServerCommand(argv: string[]): Promise<number> {
  let url: string;
  let stateDir: string;
  try {
    const args = parseArgs(argv, FLAGS, { unknownFlag: unknownOption });
    if (args.bool('help')) {
      process.stdout.write(SET_SERVER_USAGE);
      return 0;
    }
    const [first, ...extra] = args.positionals;
    if (!first || extra.length) throw new UsageError('one URL is required: mesh-agent set-server URL --state-dir DIR');
    url = checkServerUrl(first);
    const dir = args.str('state-dir');
    if (!dir) throw new UsageError('--state-dir is required');
    stateDir = dir;
  } catch (e) {
    process.stderr.write(`mesh-agent set-server: ${(e as Error).message}\n\n${SET_SERVER_USAGE}`);
    return EXIT_USAGE;
  }
  try {
    const told = await tellRunningAgent(stateDir, url);
    if (!told) await saveInStore(stateDir, url);
    process.stdout.write(
      told
        ? `The running agent of ${stateDir} now talks to ${url}\n`
        : `Saved ${url} for the agent of ${stateDir}: it connects there when it starts\n`,
    );
    return 0;
  } catch (e) {
    process.stderr.write(`mesh-agent set-server: ${(e as Error).message}\n`);
    return 1;
  }
}

/** Asks the running agent (if any) to switch; false when no agent of this state directory runs. */
async function tellRunningAgent(stateDir: string, url: string): Promise<boolean> {
  const info = await readAgentInfo(stateDir).catch(() => undefined);
  if (!info?.startTime || !isSameProcess(info.pid, info.startTime, info.bootId)) return false;
  rmSync(setServerResultPath(stateDir), { force: true });
  await writeFileAtomic(setServerRequestPath(stateDir), url + '\n', { mode: 0o600 });
  process.kill(info.pid, 'SIGUSR2');
  const deadline = Date.now() + ANSWER_TIMEOUT_MS;
  while (!existsSync(setServerResultPath(stateDir))) {
    if (Date.now() > deadline) throw new Error(`the agent (pid ${info.pid}) did not answer within 60s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const answer = readFileSync(setServerResultPath(stateDir), 'utf8').trim();
  rmSync(setServerResultPath(stateDir), { force: true });
  if (answer !== 'ok') throw new Error(`the agent (pid ${info.pid}) refused: ${answer}`);
  return true;
}

async function saveInStore(stateDir: string, url: string): Promise<void> {
  const store = await openAgentStore({
    stateDir,
    logger: process.env.MESHCTL_DEBUG ? createJsonLogger() : silentLogger,
  });
  try {
    const identity = store.identity();
    if (!identity) throw new Error(`${stateDir} holds no agent yet (join first)`);
    await store.saveIdentity({ ...identity, server: url });
  } finally {
    await store.close();
  }
}
