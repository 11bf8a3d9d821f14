/**
 * Builds dist/ with the project's own build script before a benchmark runs a shipped bundle (so that what
 * is measured is the current source).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../test/harness.ts';

/** The build's outcome, once per process: every bundle comes from the one build. */
let build: { status: number | null; stderr: string } | undefined;

/**
 * Runs `node hack/build.mjs` (the first call in a process; later ones reuse its outcome); returns how `bundle` (e.g.
 * `mesh-agent.js`) came to be, for the section's text.
 */
export function buildDist(bundle: string): string {
  const r = (build ??= spawnSync(process.execPath, ['hack/build.mjs'], { cwd: REPO_ROOT, encoding: 'utf8' }));
  if (r.status === 0) return 'built just before the run with `node hack/build.mjs`';
  if (existsSync(join(REPO_ROOT, 'dist', bundle))) {
    return `**the build failed** (${r.stderr.trim().split('\n')[0]}), so the dist/${bundle} already there was measured`;
  }
  throw new Error(`node hack/build.mjs failed: ${r.stderr}`);
}
