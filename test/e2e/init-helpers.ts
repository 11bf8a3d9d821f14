/**
 * Helpers of the `meshctl init` e2e tests: a temp world (data dir, agent state dir, root), running init
 * with the built meshctl, running the built `mesh-control-plane` with any flags, and modes of files.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { killServices, waitFor, type AgentProcess } from '../../agent/testing.ts';
import { REPO_ROOT } from '../harness.ts';
import type { BuiltCli, CliResult } from './cli-harness.ts';

/** The directories of one init. */
export interface InitWorld {
  dir: string;
  dataDir: string;
  stateDir: string;
  root: string;
  meshconfig: string;
  /** Agents to SIGKILL after the test, before their services are killed (so none is restarted). */
  agents: AgentProcess[];
  /** Runs `meshctl init` for this world (its data dir, agent state dir and agent root) with `extra` flags. */
  init(extra?: string[]): Promise<CliResult>;
}

/** A fresh world under a temp dir, removed (and its services killed) after the test. */
export function initWorld(t: { after(fn: () => void | Promise<void>): void }, cli: BuiltCli, node = 'cp-1'): InitWorld {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-init-'));
  const w = { dir, dataDir: join(dir, 'cp'), stateDir: join(dir, 'agent'), root: join(dir, 'root') };
  mkdirSync(w.root);
  const agents: AgentProcess[] = [];
  t.after(async () => {
    for (const a of agents) await a.kill('SIGKILL');
    killServices(w.stateDir);
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    ...w,
    meshconfig: join(w.dataDir, 'admin.meshconfig'),
    agents,
    init: (extra = []) =>
      cli.run([
        'init',
        '--data-dir',
        w.dataDir,
        '--agent-state-dir',
        w.stateDir,
        '--agent-root',
        w.root,
        '--name',
        node,
        ...extra,
      ]),
  };
}

/** The permission bits of a file. */
export function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

/** A `mesh-control-plane` process of the build. */
export interface CpProcess {
  pid: number;
  output(): string;
  /** Resolves with the exit code once it exited. */
  exited: Promise<number | null>;
  stop(): Promise<number | null>;
}

/** Runs the built `mesh-control-plane` with `args`; resolves once it logged `Serving` or exited. */
export async function runControlPlane(cli: BuiltCli, args: string[]): Promise<CpProcess & { serving: boolean }> {
  const bin = join(dirname(cli.bin), 'mesh-control-plane.js');
  const child = spawn(process.execPath, [bin, ...args], { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  let code: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (c) => {
      code = c;
      resolve(c);
    }),
  );
  const result = await waitFor(
    () => (out.includes('"msg":"Serving"') ? 'serving' : code !== undefined ? 'exited' : undefined),
    20_000,
    'mesh-control-plane to serve or exit',
  ).catch((e: unknown) => {
    child.kill('SIGKILL');
    throw new Error(`${(e as Error).message}\n${out}`);
  });
  const stop = async (): Promise<number | null> => {
    if (code === undefined) child.kill('SIGTERM');
    return exited;
  };
  return { pid: child.pid!, output: () => out, exited, stop, serving: result === 'serving' };
}
