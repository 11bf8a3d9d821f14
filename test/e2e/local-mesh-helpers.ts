/**
 * Runs `npm start` (hack/local-mesh.mjs) for e2e tests: the real script over a private build of dist/ (see
 * cli-harness.ts: parallel test files never share a dist/), in a fresh MESHCTL_HOME, torn down by PID at the end
 * of the test whatever happens. (local-mesh.test.ts keeps its own copy of the same start-up.)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { killServices, waitFor } from '../../agent/testing.ts';
import { buildCli, type BuiltCli } from './cli-harness.ts';
import { captureOutput, REPO_ROOT } from '../harness.ts';
import { isRunning, pidsWithTag } from './mesh-helpers.ts';

export const LOCAL_NODES = ['node-a', 'node-b', 'node-c'];

/** A private build of dist/ beside a link to manifests/, the working directory `npm start` needs. */
export async function buildLocalMeshDir(): Promise<BuiltCli & { dir: string }> {
  const cli = await buildCli();
  const dir = dirname(dirname(cli.bin));
  symlinkSync(join(REPO_ROOT, 'manifests'), join(dir, 'manifests'));
  return { ...cli, dir };
}

/** The pids of live processes whose parent is `ppid`. */
export function childrenOf(ppid: number): number[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map(Number)
    .filter((pid) => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === ppid && isRunning(pid);
      } catch {
        return false;
      }
    });
}

/** A running `npm start`. */
export interface LocalMesh {
  pid: number;
  /** MESHCTL_HOME. */
  home: string;
  /** The path printed on the `export MESHCONFIG=` line. */
  meshconfig: string;
  stdout(): string;
  stderr(): string;
  /** Both streams, for failure messages. */
  output(): string;
  /** Presses Enter in its terminal. */
  enter(): void;
  exited: Promise<number | string | null>;
  /** A node's agent state dir. */
  state(node: string): string;
}

/** Starts the local mesh from `cwd` on `listen` in a fresh MESHCTL_HOME and waits for its `export MESHCONFIG=` line. */
export async function startLocalMesh(
  t: { after(fn: () => Promise<void>): void },
  opts: { cwd: string; listen: string },
): Promise<LocalMesh> {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-local-mesh-e2e-'));
  const home = join(dir, 'home');
  const env: NodeJS.ProcessEnv = { ...process.env, MESHCTL_HOME: home, MESHCTL_LISTEN: opts.listen };
  delete env.MESHCONFIG;
  const child = spawn(process.execPath, [join(REPO_ROOT, 'hack', 'local-mesh.mjs')], {
    cwd: opts.cwd,
    env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const out = captureOutput(child);
  const exited = new Promise<number | string | null>((resolve) =>
    child.once('exit', (code, sig) => resolve(code ?? sig)),
  );
  const state = (node: string): string => join(home, 'nodes', node, 'state');
  t.after(async () => {
    const ours = [...childrenOf(child.pid!), ...pidsWithTag(home)];
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    for (const pid of ours) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    for (const node of LOCAL_NODES) killServices(state(node));
    rmSync(dir, { recursive: true, force: true });
  });
  const output = (): string => `stdout:\n${out.stdout()}\nstderr:\n${out.stderr()}`;
  const meshconfig = await waitFor(
    () => /^export MESHCONFIG=(.+)$/m.exec(out.stdout())?.[1],
    35_000,
    'the export MESHCONFIG line',
  ).catch((e: Error) => {
    throw new Error(`${e.message}\n${output()}`);
  });
  return {
    pid: child.pid!,
    home,
    meshconfig,
    stdout: out.stdout,
    stderr: out.stderr,
    output,
    enter: () => child.stdin.write('\n'),
    exited,
    state,
  };
}

/** Waits for `re` in a stream of the local mesh (returning the match), failing with its whole output. */
export async function expectOutput(
  mesh: LocalMesh,
  stream: 'stdout' | 'stderr',
  re: RegExp,
  timeoutMs: number,
): Promise<RegExpExecArray> {
  return await waitFor(() => re.exec(mesh[stream]()) ?? undefined, timeoutMs, `${re} on ${stream}`).catch(
    (e: Error) => {
      throw new Error(`${e.message}\n${mesh.output()}`);
    },
  );
}
