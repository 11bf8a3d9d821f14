/**
 * Runs the built meshctl in e2e tests. Each test file builds its own copy with `hack/build.mjs`, run in a
 * temp directory whose `api`, `cli`, `controllers`, `agent`, `package.json` and `node_modules` link to the
 * repository, so parallel test files never overwrite each other's (or the developer's) `dist/`.
 */
import { spawn } from 'node:child_process';
import { after, before } from 'node:test';
import { existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import { captureOutput, REPO_ROOT, startServer, type TestServer } from '../harness.ts';

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
  /** Runs the file itself, started by its shebang as the installed `meshctl` is, instead of `node FILE`. */
  asInstalled?: boolean;
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
  for (const name of ['api', 'cli', 'controllers', 'agent', 'web', 'package.json', 'node_modules']) {
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
  const [command, argv] = opts.asInstalled ? [args[0], args.slice(1)] : [process.execPath, args];
  const child = spawn(command, argv, { cwd: opts.cwd ?? REPO_ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
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

/** What most CLI test files share: the real server, the built meshctl, an admin client and a temp dir. */
export interface CliSuite {
  readonly server: TestServer;
  readonly cli: BuiltCli;
  readonly client: HttpClient;
  /** A temp dir of the file's own, removed after it. */
  readonly dir: string;
  /** Runs the built meshctl against the server with the admin meshconfig. */
  meshctl(...args: string[]): Promise<CliResult>;
}

/** Registers the file's `before`/`after` hooks that start and stop a CliSuite (call at the top level of a test file). */
export function cliSuite(tempPrefix: string): CliSuite {
  const dir = mkdtempSync(join(tmpdir(), tempPrefix));
  let parts: { server: TestServer; cli: BuiltCli; client: HttpClient } | undefined;
  const started = (): NonNullable<typeof parts> => {
    if (!parts) throw new Error('the CLI suite is used before its before() hook ran');
    return parts;
  };
  before(async () => {
    const [server, cli] = await Promise.all([startServer(), buildCli()]);
    parts = { server, cli, client: createClient(server.config) };
  });
  after(async () => {
    parts?.client.close();
    await parts?.server.stop();
    parts?.cli.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    get server() {
      return started().server;
    },
    get cli() {
      return started().cli;
    },
    get client() {
      return started().client;
    },
    dir,
    meshctl: (...args) => started().cli.run(args, { config: started().server.meshconfigPath }),
  };
}
