/**
 * Runs the built meshctl in e2e tests. Each test file builds its own copy with `hack/build.mjs`, run in a
 * temp directory whose `api`, `cli`, `controllers`, `agent`, `package.json` and `node_modules` link to the
 * repository, so parallel test files never overwrite each other's (or the developer's) `dist/`.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureOutput, REPO_ROOT } from '../harness.ts';

/** What one meshctl run did. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A private build of meshctl. */
export interface BuiltCli {
  /** The bundle to run with node. */
  bin: string;
  /** Runs meshctl with the given meshconfig (no config when undefined). */
  run(args: string[], opts?: RunOptions): Promise<CliResult>;
  /** Starts meshctl and returns the child, for long-running commands (`get -w`). */
  start(args: string[], opts?: RunOptions): RunningCli;
  /** Removes the build. */
  cleanup(): void;
}

export interface RunOptions {
  config?: string;
  stdin?: string;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

/** A meshctl process that is still running. */
export interface RunningCli {
  pid: number;
  /** Output so far. */
  stdout(): string;
  stderr(): string;
  kill(signal: NodeJS.Signals): void;
  exited: Promise<CliResult>;
}

/** Builds meshctl with hack/build.mjs into a temp dir (see the file comment). */
export async function buildCli(): Promise<BuiltCli> {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-cli-build-'));
  for (const name of ['api', 'cli', 'controllers', 'agent', 'package.json', 'node_modules']) {
    if (existsSync(join(REPO_ROOT, name))) symlinkSync(join(REPO_ROOT, name), join(dir, name));
  }
  const build = spawnNode([join(REPO_ROOT, 'hack', 'build.mjs')], { cwd: dir });
  const result = await build.exited;
  if (result.code !== 0) throw new Error(`hack/build.mjs failed (${result.code}):\n${result.stderr}${result.stdout}`);
  const bin = join(dir, 'dist', 'meshctl.js');
  const withConfig = (args: string[], opts: RunOptions): string[] => [
    bin,
    ...(opts.config ? ['--config', opts.config] : []),
    ...args,
  ];
  return {
    bin,
    run: (args, opts = {}) => spawnNode(withConfig(args, opts), opts).exited,
    start: (args, opts = {}) => spawnNode(withConfig(args, opts), opts),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function spawnNode(args: string[], opts: RunOptions): RunningCli {
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  delete env.MESHCONFIG;
  if (opts.env?.MESHCONFIG) env.MESHCONFIG = opts.env.MESHCONFIG;
  delete env.MESHCTL_DEBUG;
  const child = spawn(process.execPath, args, { cwd: opts.cwd ?? REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
  const out = captureOutput(child);
  child.stdin.end(opts.stdin ?? '');
  const exited = new Promise<CliResult>((resolve) => {
    child.once('close', (code, signal) => resolve({ code, signal, stdout: out.stdout(), stderr: out.stderr() }));
  });
  return {
    pid: child.pid as number,
    stdout: out.stdout,
    stderr: out.stderr,
    kill: (s) => void child.kill(s),
    exited,
  };
}

/** Polls until `check` returns true (or fails after `timeoutMs`). */
export async function eventually(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
