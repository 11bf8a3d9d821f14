// The documents' relative links resolve: a README that cites a file cites one that is in the repository.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = join(import.meta.dirname, '..');
// Shipped verbatim: the ADRs link to documents of the design repository (docs/adr/README.md says so).
const verbatim = /^docs\/adr\/\d{4}-/;

/** The relative link targets of a markdown text (no URLs, no in-page anchors), without their #fragment. */
function relativeLinks(text: string): string[] {
  const targets = [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? '');
  return targets.filter((t) => !/^[a-z]+:/i.test(t) && !t.startsWith('#')).map((t) => t.replace(/#.*$/, ''));
}

test('every relative link in the markdown files resolves to a file in the repository', () => {
  const files = execFileSync('git', ['ls-files', '*.md'], { cwd: root, encoding: 'utf8' }).split('\n');
  const broken: string[] = [];
  for (const file of files.filter((f) => f && !verbatim.test(f))) {
    for (const target of relativeLinks(readFileSync(join(root, file), 'utf8')))
      if (!existsSync(join(root, dirname(file), target))) broken.push(`${file} → ${target}`);
  }
  assert.deepEqual(broken, []);
});

test('the README cites ADR 0053 by a link to its text under docs/adr/', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  assert.ok(relativeLinks(readme).includes('docs/adr/0053-one-node-runs-the-control-plane.md'));
});
