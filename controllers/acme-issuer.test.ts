// acme-client (with its axios and node-forge) is loaded by the first ACME issuance, not when the control plane starts:
// it took about a third of the start-up. A fresh node process loads the control plane's certificate wiring (which
// holds the acme issuer) and finds no file of acme-client among the modules loaded; importing it then does load
// them (the check can see it). The issuance itself against pebble: test/e2e/certificate-acme.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { REPO_ROOT } from '../test/repo-root.ts';

const script = `
import { createRequire } from 'node:module';
const loaded = () => Object.keys(createRequire(process.cwd() + '/').cache).filter((f) => f.includes('/node_modules/acme-client/')).length;
await import('./controllers/certificate-wiring.ts');
const atStart = loaded();
await import('acme-client');
console.log(JSON.stringify({ atStart, afterImport: loaded() }));
`;

test('the certificate wiring loads no acme-client until an ACME certificate is issued', () => {
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  const { atStart, afterImport } = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, number>;
  assert.equal(atStart, 0, 'no file of acme-client loaded by the wiring');
  assert.ok(afterImport > 0, 'importing acme-client shows in the module cache');
});
