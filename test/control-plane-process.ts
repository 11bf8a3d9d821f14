/**
 * The real `mesh-control-plane` as a child process for tests (`controllers/main.ts` through tsx) and benchmarks
 * (also its shipped bundle): started on a temp or given data dir, ready once it logs `Serving`, stopped with SIGTERM
 * or SIGKILL.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ClientConfig } from '../api/client/types.ts';
import { loadMeshconfig } from '../api/client/meshconfig.ts';
import { REPO_ROOT } from './repo-root.ts';

/**
 * The V8 flags the shipped `mesh-control-plane` bundle's shebang carries (hack/build.mjs): a run that measures the
 * control plane as shipped (the scale bench) passes them as `nodeArgs`. hack/node-flags.test.ts keeps them equal.
 */
export const CONTROL_PLANE_NODE_FLAGS: readonly string[] = [
  '--max-old-space-size=1024',
  '--max-semi-space-size=64',
  '--no-memory-reducer',
];

/** Options of `spawnControlPlane`. */
export interface SpawnOptions {
  /** Reuse this data directory (a restart); it is then not removed by `stop()`. */
  dataDir?: string;
  insecure?: boolean;
  /** `--listen` (default `127.0.0.1:0`). */
  listen?: string;
  /** How long to wait for the ready line (default 20 s). */
  timeoutMs?: number;
  /** More flags (e.g. `['--max-watches-per-client', '1']`). */
  args?: string[];
  /** Flags for node itself, before the script (e.g. `['--cpu-prof', '--cpu-prof-dir', dir]`). */
  nodeArgs?: string[];
  /**
   * Runs the shipped bundle, `dist/mesh-control-plane.js` (built by hack/build.mjs: the caller builds it), instead of
   * `controllers/main.ts` through tsx: what a benchmark of the control plane as shipped measures.
   */
  bundle?: boolean;
}

/** A running `mesh-control-plane` child process. */
export interface ControlPlaneProcess {
  pid: number;
  url: string;
  dataDir: string;
  meshconfigPath: string;
  config: ClientConfig;
  /** Everything the process wrote to stderr so far. */
  output(): string;
  /** SIGTERM and wait; resolves with the exit code (the data dir is removed unless it was passed in). */
  stop(): Promise<number | null>;
  /** SIGKILL and wait. */
  kill(): Promise<number | null>;
}

/** Runs `controllers/main.ts` through tsx (or the bundle) and waits for its `Serving` log line. */
export async function spawnControlPlane(opts: SpawnOptions = {}): Promise<ControlPlaneProcess> {
  const dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'meshctl-cp-'));
  const args = [
    ...(opts.nodeArgs ?? []),
    ...(opts.bundle ? ['dist/mesh-control-plane.js'] : ['--import', 'tsx', 'controllers/main.ts']),
    '--data-dir',
    dataDir,
    '--listen',
    opts.listen ?? '127.0.0.1:0',
  ];
  if (opts.insecure) args.push('--insecure-http');
  args.push(...(opts.args ?? []));
  const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  child.stderr.setEncoding('utf8').on('data', (d: string) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const ready = await waitForServing(() => out, exited, opts.timeoutMs ?? 20_000).catch((e: unknown) => {
    child.kill('SIGKILL');
    throw e;
  });
  const meshconfigPath = join(dataDir, 'admin.meshconfig');
  const finish = async (signal: NodeJS.Signals): Promise<number | null> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    const code = await exited;
    if (!opts.dataDir) rmSync(dataDir, { recursive: true, force: true });
    return code;
  };
  return {
    pid: child.pid!,
    url: ready.url,
    dataDir,
    meshconfigPath,
    config: loadMeshconfig(meshconfigPath),
    output: () => out,
    stop: () => finish('SIGTERM'),
    kill: () => finish('SIGKILL'),
  };
}

async function waitForServing(
  output: () => string,
  exited: Promise<number | null>,
  timeoutMs: number,
): Promise<{ url: string }> {
  const deadline = Date.now() + timeoutMs;
  let exitCode: number | null | undefined;
  void exited.then((c) => {
    exitCode = c;
  });
  while (Date.now() < deadline) {
    for (const line of output().split('\n')) {
      if (!line.startsWith('{')) continue;
      const rec = JSON.parse(line) as { msg?: string; url?: string };
      if (rec.msg === 'Serving' && rec.url) return { url: rec.url };
    }
    if (exitCode !== undefined)
      throw new Error(`mesh-control-plane exited with ${exitCode} before serving:\n${output()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`mesh-control-plane did not log "Serving" within ${timeoutMs} ms:\n${output()}`);
}

/** Collects a child's stdout and stderr as text, as they arrive (read them with the returned getters). */
export function captureOutput(child: { stdout: NodeJS.ReadableStream | null; stderr: NodeJS.ReadableStream | null }): {
  stdout(): string;
  stderr(): string;
} {
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  return { stdout: () => stdout, stderr: () => stderr };
}
