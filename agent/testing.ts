/**
 * Helpers for the agent's tests (not used by production code): run the real `mesh-agent` process,
 * wait for conditions, write Declarations as admin, find a free port, and kill every service process an
 * agent recorded in its state directory (by the pid files, checking each is still that process).
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Client } from '../api/client/types.ts';
import { ApiError } from '../api/meta/api-error.ts';
import type { Declaration, DeclaredResource } from '../api/v1alpha1/generated/declaration.ts';
import { isSameProcess, type ProcessRecord } from './drivers/process-record.ts';
import { createAgentMetrics, type AgentMetrics } from './metrics.ts';

/** The repository root (where `agent/main.ts` is run from). */
const REPO_ROOT = fileURLToPath(new URL('..', import.meta.url));

/** A running `mesh-agent run` process. */
export interface AgentProcess {
  pid: number;
  /** The metrics endpoint from the ready line. */
  metrics: string;
  output(): string;
  /** Parsed JSON log lines so far. */
  lines(): Array<Record<string, unknown>>;
  /** Resolves with the exit code (or signal name) once it exited. */
  exited: Promise<number | string | null>;
  kill(signal?: NodeJS.Signals): Promise<number | string | null>;
}

/** Runs `node --import tsx agent/main.ts run …args` and waits for "Started agent" (or its exit). */
export function spawnAgent(args: string[], timeoutMs = 20_000): Promise<AgentProcess> {
  return spawnAgentCommand(['run', ...args], timeoutMs);
}

/** Runs `mesh-agent <command> …` through tsx (`join` or `run`) and waits for "Started agent" (or its exit). */
export function spawnAgentCommand(args: string[], timeoutMs = 20_000): Promise<AgentProcess> {
  return spawnAgentProgram([process.execPath, '--import', 'tsx', 'agent/main.ts', ...args], { timeoutMs });
}

/** Where and how `spawnAgentProgram` runs the agent. */
export interface SpawnAgentOptions {
  /** Default: the repository root. */
  cwd?: string;
  /** Default: this process's environment. */
  env?: NodeJS.ProcessEnv;
  timeoutMs?: number;
}

/** Runs an agent by a whole command line (`[program, …args]`, e.g. a built bundle) and waits for "Started agent". */
export async function spawnAgentProgram(argv: string[], opts: SpawnAgentOptions = {}): Promise<AgentProcess> {
  const timeoutMs = opts.timeoutMs ?? 20_000;
  const child = spawn(argv[0], argv.slice(1), {
    cwd: opts.cwd ?? REPO_ROOT,
    ...(opts.env ? { env: opts.env } : {}),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, sig) => resolve(code ?? sig)),
  );
  let done = false;
  void exited.then(() => {
    done = true;
  });
  const lines = (): Array<Record<string, unknown>> =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const kill = async (signal: NodeJS.Signals = 'SIGKILL'): Promise<number | string | null> => {
    if (!done) child.kill(signal);
    return exited;
  };
  const ready = await waitFor(
    () => lines().find((l) => l.msg === 'Started agent') ?? (done ? 'exited' : undefined),
    timeoutMs,
    'Started agent',
  ).catch(async (e: unknown) => {
    await kill();
    throw new Error(`${(e as Error).message}\n${out}`);
  });
  if (ready === 'exited') throw new Error(`${argv.join(' ')} exited before it started:\n${out}`);
  return { pid: child.pid!, metrics: String(ready.metrics ?? ''), output: () => out, lines, exited, kill };
}

/** Polls `fn` until it returns something other than undefined/false; rejects after `timeoutMs`. */
export async function waitFor<T>(
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`,
      );
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Reads the pid files the agent's supervisor keeps in `<stateDir>/services`. */
export function serviceRecords(stateDir: string): ProcessRecord[] {
  let names: string[];
  try {
    names = readdirSync(join(stateDir, 'services')).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    try {
      return [JSON.parse(readFileSync(join(stateDir, 'services', n), 'utf8')) as ProcessRecord];
    } catch {
      return [];
    }
  });
}

/** The live pid of a service by resource id, or undefined. */
export function servicePid(stateDir: string, id: string): number | undefined {
  const rec = serviceRecords(stateDir).find((r) => r.id === id);
  return rec && isSameProcess(rec.pid, rec.startTime, rec.bootId) ? rec.pid : undefined;
}

/** SIGKILLs every service process recorded in the state directory that is still that process. */
export function killServices(stateDir: string): void {
  for (const rec of serviceRecords(stateDir)) {
    if (isSameProcess(rec.pid, rec.startTime, rec.bootId)) {
      try {
        process.kill(rec.pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
  }
}

/** Writes (creates or replaces) the Declaration of `node` as admin: spec.generation = `generation`. */
export async function putDeclaration(
  client: Client,
  node: string,
  generation: number,
  resources: DeclaredResource[],
): Promise<Declaration> {
  const obj: Declaration = {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Declaration',
    metadata: { name: node },
    spec: { generation, resources },
  };
  try {
    const cur = await client.get('declarations', node);
    return await client.update('declarations', {
      ...obj,
      metadata: { name: node, resourceVersion: cur.metadata.resourceVersion },
    });
  } catch (e) {
    if (!(e instanceof ApiError) || e.code !== 404) throw e;
    return client.create('declarations', obj);
  }
}

/** A free TCP port on 127.0.0.1 (for a control plane that must come back on the same address). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

/** A command that runs forever, tagged so its argv is unique (what a test service runs). */
export function foreverCommand(tag: string): string[] {
  return [process.execPath, '-e', `/* ${tag} */ setInterval(() => {}, 1e9)`];
}

/** Scrapes one sample's value from a Prometheus text exposition (`name{labels}`), or undefined. */
export function metricValue(text: string, sample: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? undefined : Number(line.slice(sample.length + 1));
}

/** Runs `mesh-agent run …args` expecting it to exit on its own; resolves with its exit code and output. */
export async function runAgentUntilExit(
  args: string[],
  timeoutMs = 20_000,
): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'agent/main.ts', ...args], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    output += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    output += d;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, output };
}

/**
 * A self-signed P-256 certificate made by `openssl` (tests only), written to `certPath` and `keyPath`, for
 * `subjectAltName` (e.g. `DNS:localhost,IP:127.0.0.1`); returns both as PEM.
 */
export function opensslSelfSigned(o: {
  certPath: string;
  keyPath: string;
  commonName: string;
  subjectAltName: string;
  days: number;
}): { cert: string; key: string } {
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  args.push('-keyout', o.keyPath, '-out', o.certPath, '-days', String(o.days));
  args.push('-subj', `/CN=${o.commonName}`, '-addext', `subjectAltName=${o.subjectAltName}`);
  execFileSync('openssl', args, { stdio: 'ignore' });
  return { cert: readFileSync(o.certPath, 'utf8'), key: readFileSync(o.keyPath, 'utf8') };
}

/** Agent metrics with nothing to report (no outage, no generations, an empty outbox): for tests of the metrics port. */
export function idleAgentMetrics(node: string): AgentMetrics {
  return createAgentMetrics({
    node,
    version: '1',
    unreachableSeconds: () => 0,
    generations: () => ({}),
    outboxItems: () => 0,
  });
}

/** True while `pid` is a live process (not gone, not a zombie). */
export function isRunning(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return !/^\d+ \(.*\) [ZX]/s.test(stat);
  } catch {
    return false;
  }
}

/** The argv of a process joined with spaces, or undefined when it is gone. */
export function cmdline(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return undefined;
  }
}

/** Every live process whose argv contains `tag` (this machine-wide scan is how "runs on no other node" is checked). */
export function pidsWithTag(tag: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    const argv = cmdline(Number(name));
    if (argv?.includes(tag) && isRunning(Number(name))) out.push(Number(name));
  }
  return out.sort((x, y) => x - y);
}
