/**
 * `<state-dir>/agent.json`: where a running agent can be found (pid, node, metrics URL), for the local
 * mesh, `mesh-agent reconcile` and tests — written atomically once the agent has started.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../api/meta/atomic-file.ts';
import { currentBootId, procStat } from './drivers/process-record.ts';

/** What agent.json holds. */
export interface AgentInfoFile {
  pid: number;
  /** The pid's start time and boot (drivers/process-record.ts), so a reused pid is never signalled. */
  startTime?: string;
  bootId?: string;
  node: string;
  root: string;
  metrics?: string;
  startedAt: string;
}

/** The path of agent.json in a state directory. */
export function agentInfoPath(stateDir: string): string {
  return join(stateDir, 'agent.json');
}

/** Writes agent.json for this process. */
export async function writeAgentInfo(
  stateDir: string,
  info: { node: string; root: string; metrics?: string },
): Promise<void> {
  const startTime = procStat(process.pid)?.startTime;
  const rec: AgentInfoFile = {
    pid: process.pid,
    ...(startTime !== undefined ? { startTime, bootId: currentBootId() } : {}),
    ...info,
    startedAt: new Date().toISOString(),
  };
  await writeFileAtomic(agentInfoPath(stateDir), JSON.stringify(rec, null, 2) + '\n', { mode: 0o644 });
}

/** Reads agent.json (throws when absent). */
export async function readAgentInfo(stateDir: string): Promise<AgentInfoFile> {
  return JSON.parse(await readFile(agentInfoPath(stateDir), 'utf8')) as AgentInfoFile;
}
