// What the control plane's start leaves unloaded. acme-client (with its axios and node-forge) is loaded by the first
// ACME issuance, @peculiar/x509 by the first certificate made (a first start, a renewal): together they took about
// half of the start-up. A fresh node process loads the certificate wiring (which holds the acme issuer) and runs the
// start's certificate checks on a data directory made beforehand (ensureControlPlaneFiles reads the CA and serving
// certificate and checks them); neither package is among the modules it loaded. Importing them then does show (the
// check can see them). Issuing through both: pki.test.ts, test/e2e/certificate-acme.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureControlPlaneFiles } from '../api/server/pki/first-start.ts';
import { REPO_ROOT } from '../test/repo-root.ts';

const script = `
import { createRequire } from 'node:module';
const cache = createRequire(process.cwd() + '/').cache;
const loaded = (pkg) => Object.keys(cache).filter((f) => f.includes('/node_modules/' + pkg + '/')).length;
const { ensureControlPlaneFiles } = await import('./api/server/pki/first-start.ts');
await import('./controllers/certificate-wiring.ts');
await ensureControlPlaneFiles({ dataDir: process.argv[1], listenHost: '127.0.0.1' });
const atStart = { acme: loaded('acme-client'), x509: loaded('@peculiar/x509') };
await import('acme-client');
console.log(JSON.stringify({ atStart, afterImport: { acme: loaded('acme-client'), x509: loaded('@peculiar/x509') } }));
`;

test("the start's certificate checks load neither acme-client nor @peculiar/x509", async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-start-modules-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' }); // the first start: CA and serving certificate
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script, dir], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  const seen = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, Record<string, number>>;
  assert.deepEqual(seen.atStart, { acme: 0, x509: 0 }, 'no file of either package loaded at start');
  assert.ok(
    seen.afterImport.acme > 0 && seen.afterImport.x509 > 0,
    'importing acme-client (which uses @peculiar/x509) shows',
  );
});
