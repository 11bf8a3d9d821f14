/**
 * Running the real kubectl (v1.32) against a test server over HTTPS, with the server's admin meshconfig as
 * kubeconfig, its own cache directory and HOME, and no flags beyond what a user would type.
 */
import { execFile, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestServer } from '../harness.ts';

/** Whether kubectl is installed (the tests are skipped without it). */
export const hasKubectl = spawnSync('kubectl', ['version', '--client'], { encoding: 'utf8' }).status === 0;

/** What a kubectl run printed, and its exit code. */
export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The arguments that point kubectl at `srv` (kubeconfig and a cache directory under `work`). */
export function kubectlArgs(srv: TestServer, work: string, args: string[]): string[] {
  return ['--kubeconfig', srv.meshconfigPath, '--cache-dir', join(work, 'cache'), ...args];
}

/** The environment of a kubectl run: HOME in `work`, no KUBECONFIG, plus `env`. */
export function kubectlEnv(work: string, env: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, KUBECONFIG: '', HOME: work, ...env };
}

/** Runs kubectl to completion (30 s at most). */
export function runKubectl(
  srv: TestServer,
  work: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<KubectlResult> {
  return new Promise((resolve) => {
    execFile(
      'kubectl',
      kubectlArgs(srv, work, args),
      { env: kubectlEnv(work, env), timeout: 30_000 },
      (err, stdout, stderr) => {
        resolve({
          code: err ? Number((err as NodeJS.ErrnoException & { code?: unknown }).code ?? 1) || 1 : 0,
          stdout,
          stderr,
        });
      },
    );
  });
}
