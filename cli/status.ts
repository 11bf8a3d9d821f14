/**
 * `meshctl status [--check] [--min-budget DUR] [--max-backup-age DUR] [--agent-state-dir DIR]`: the mesh's
 * recovery clock for people and for cron (status-report.ts decides what is printed). It never fails on an
 * unreachable control plane: it says so (with the local node's view when `--agent-state-dir` names an
 * agent's state directory) and prints what is stopped. With `--check` it exits 1 and prints why when the
 * control plane is unreachable, the outage budget is under `--min-budget` (default 7d) or there is no
 * verified backup younger than `--max-backup-age` (default 24h).
 */
import { isUnreachable } from '../api/client/http-client.ts';
import { parseDuration } from '../api/meta/duration.ts';
import type { Certificate, Mesh, Node } from '../api/v1alpha1/generated/index.ts';
import { readClockFacts, type ClockFacts } from '../api/wire/node-clock.ts';
import { type Command, type CommandContext } from './command.ts';
import { EXIT_FAILED, EXIT_OK, UsageError } from './errors.ts';
import { loadConfig } from './config.ts';
import { statusReport } from './status-report.ts';

/** The `status` command. */
export const command: Command = {
  usage: 'status [--check] [--min-budget DUR] [--max-backup-age DUR] [--agent-state-dir DIR]',
  description:
    'Show how long the mesh can go without its control plane: its reachability, each node and its last contact, the certificates closest to expiry, the recovery deadline and outage budget, the last verified backup, and what is stopped right now. --check exits 1 (printing why) when the control plane is unreachable, the budget is under --min-budget or no verified backup is younger than --max-backup-age.',
  examples: ['meshctl status', 'meshctl status --check --min-budget 14d   # for cron or monitoring'],
  flags: [
    { name: 'check', type: 'boolean', help: 'exit 1 when a threshold is crossed (for cron and monitoring)' },
    { name: 'min-budget', type: 'string', arg: 'DUR', help: 'the smallest acceptable outage budget (default 7d)' },
    { name: 'max-backup-age', type: 'string', arg: 'DUR', help: 'the oldest acceptable verified backup (default 24h)' },
    {
      name: 'agent-state-dir',
      type: 'string',
      arg: 'DIR',
      help: "a local agent's state directory: its view of the control plane when that is unreachable",
    },
  ],
  run,
};

/** A duration flag: Go-style (1h30m) plus whole days (7d). */
function durationFlag(ctx: CommandContext, name: string, fallback: string): number {
  const text = ctx.args.str(name) ?? fallback;
  try {
    return parseDuration(text.replace(/(\d+)d/g, (_, n: string) => `${Number(n) * 24}h`));
  } catch (e) {
    throw new UsageError(`--${name}: ${(e as Error).message}`);
  }
}

async function readLocal(dir: string | undefined): Promise<ClockFacts | undefined> {
  return dir ? readClockFacts(dir).catch(() => undefined) : undefined;
}

async function run(ctx: CommandContext): Promise<number> {
  const minBudgetMs = durationFlag(ctx, 'min-budget', '7d');
  const maxBackupAgeMs = durationFlag(ctx, 'max-backup-age', '24h');
  const server = loadConfig({ flag: ctx.args.str('config') }).server;
  const client = ctx.client();
  let error: string | undefined;
  let mesh: Mesh | undefined;
  let nodes: Node[] = [];
  let certificates: Certificate[] = [];
  try {
    mesh = await client.get('meshes', 'mesh');
    nodes = (await client.list('nodes')).items;
    certificates = (await client.list('certificates')).items;
  } catch (e) {
    if (!isUnreachable(e)) throw e;
    error = (e as Error).message.replace(/^the control plane at \S+ is unreachable ?/, '').replace(/^\((.*)\)$/, '$1');
  }
  const local = error ? await readLocal(ctx.args.str('agent-state-dir')) : undefined;
  const out = statusReport({
    server,
    now: Date.now(),
    error,
    mesh,
    nodes,
    certificates,
    local,
    minBudgetMs,
    maxBackupAgeMs,
  });
  ctx.out(out.text);
  if (!ctx.args.bool('check')) return EXIT_OK;
  if (out.problems.length === 0) {
    ctx.out('\nCheck passed.\n');
    return EXIT_OK;
  }
  ctx.out(`\nCheck FAILED:\n${out.problems.map((p) => `  - ${p}`).join('\n')}\n`);
  return EXIT_FAILED;
}
