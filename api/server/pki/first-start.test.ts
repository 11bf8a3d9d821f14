import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadMeshconfig } from '../../client/meshconfig.ts';
import { hashToken } from '../access/auth.ts';
import { controlPlanePaths, ensureControlPlaneFiles, TICKET_KEYS_BYTES, writeAdminMeshconfig } from './first-start.ts';
import type { LogFields } from '../../meta/logger.ts';
import { certInfo, issueServingCert, signedBy } from './pki.ts';

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-first-start-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function recorder(): {
  logger: { info(m: string, f?: LogFields): void; error(m: string, f?: LogFields): void };
  msgs: string[];
} {
  const msgs: string[] = [];
  return { msgs, logger: { info: (m) => msgs.push(m), error: (m) => msgs.push(m) } };
}

const mode = (p: string): number => statSync(p).mode & 0o777;

test('first start creates the CA, serving cert, hashed admin token and a 0600 meshconfig', async (t) => {
  const dir = tempDir(t);
  const p = controlPlanePaths(dir);
  const files = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' });
  assert.equal(writeAdminMeshconfig(files, 'https://127.0.0.1:7443'), true);
  for (const f of [p.caKey, p.key, p.tokenHash, p.meshconfig]) assert.equal(mode(f), 0o600, f);
  assert.equal(readFileSync(p.tokenHash, 'utf8').trim(), hashToken(files.adminToken));
  assert.ok(!readFileSync(p.tokenHash, 'utf8').includes(files.adminToken));
  assert.match(files.adminToken, /^[A-Za-z0-9_-]{43}$/);
  const cfg = loadMeshconfig(p.meshconfig);
  assert.deepEqual(cfg, { server: 'https://127.0.0.1:7443', caData: files.ca.certPem, token: files.adminToken });
  const info = certInfo(files.serving.certPem);
  assert.ok(info.ipAddresses.includes('127.0.0.1') && info.ipAddresses.includes('::1'));
  assert.ok(info.dnsNames.includes('localhost'));
  assert.equal(await signedBy(files.serving.certPem, files.ca.certPem), true);
});

test('later starts reuse everything; only a changed URL rewrites the meshconfig', async (t) => {
  const dir = tempDir(t);
  const first = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' });
  writeAdminMeshconfig(first, 'https://127.0.0.1:7443');
  const { logger, msgs } = recorder();
  const again = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1', logger });
  assert.deepEqual(again, first);
  assert.deepEqual(msgs, []);
  assert.equal(writeAdminMeshconfig(again, 'https://127.0.0.1:7443'), false);
  assert.equal(writeAdminMeshconfig(again, 'https://127.0.0.1:7444'), true);
  assert.equal(loadMeshconfig(join(dir, 'admin.meshconfig')).server, 'https://127.0.0.1:7444');
  assert.equal(loadMeshconfig(join(dir, 'admin.meshconfig')).token, first.adminToken);
});

test('a new listen address re-issues the serving cert with the CA kept', async (t) => {
  const dir = tempDir(t);
  const first = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' });
  writeAdminMeshconfig(first, 'https://127.0.0.1:7443');
  const { logger, msgs } = recorder();
  const moved = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.2', logger });
  assert.equal(moved.ca.certPem, first.ca.certPem);
  assert.notEqual(moved.serving.certPem, first.serving.certPem);
  assert.ok(certInfo(moved.serving.certPem).ipAddresses.includes('127.0.0.2'));
  assert.deepEqual(msgs, ['Issued serving certificate']);
  const named = await ensureControlPlaneFiles({ dataDir: dir, listenHost: 'cp.example.org' });
  assert.ok(certInfo(named.serving.certPem).dnsNames.includes('cp.example.org'));
});

test('a serving cert that expires soon is re-issued', async (t) => {
  const dir = tempDir(t);
  const first = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' });
  const short = await issueServingCert({
    ca: first.ca,
    dnsNames: ['localhost'],
    ipAddresses: ['127.0.0.1', '::1'],
    days: 2,
  });
  writeFileSync(controlPlanePaths(dir).cert, short.certPem);
  const again = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' });
  assert.ok(certInfo(again.serving.certPem).notAfter.getTime() > Date.now() + 300 * 86_400_000);
});

test('without admin.meshconfig the admin token is replaced (and the log says so)', async (t) => {
  const dir = tempDir(t);
  const first = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' });
  writeAdminMeshconfig(first, 'https://127.0.0.1:7443');
  unlinkSync(join(dir, 'admin.meshconfig'));
  const { logger, msgs } = recorder();
  const again = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1', logger });
  assert.notEqual(again.adminToken, first.adminToken);
  assert.equal(readFileSync(controlPlanePaths(dir).tokenHash, 'utf8').trim(), hashToken(again.adminToken));
  assert.deepEqual(msgs, ['Generated admin token']);
});

test('the TLS session ticket key is made once (0600), kept across starts, and replaced, logged, when damaged', async (t) => {
  const dir = tempDir(t);
  const p = controlPlanePaths(dir);
  const { logger, msgs } = recorder();
  const first = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1', logger });
  assert.equal(first.ticketKeys.length, TICKET_KEYS_BYTES);
  assert.equal(mode(p.ticketKeys), 0o600);
  assert.ok(msgs.includes('Created the TLS session ticket key'), msgs.join('; '));
  writeAdminMeshconfig(first, 'https://127.0.0.1:7443'); // so that later starts log nothing about the token
  const again = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' });
  assert.deepEqual(again.ticketKeys, first.ticketKeys);

  for (const damaged of ['', 'not base64 at all!', first.ticketKeys.subarray(0, 40).toString('base64')]) {
    writeFileSync(p.ticketKeys, damaged, { mode: 0o600 });
    const log = recorder();
    const replaced = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1', logger: log.logger });
    assert.equal(replaced.ticketKeys.length, TICKET_KEYS_BYTES, JSON.stringify(damaged));
    assert.notDeepEqual(replaced.ticketKeys, first.ticketKeys);
    assert.deepEqual(log.msgs, ['Replaced the TLS session ticket key: the file did not hold one']);
    assert.deepEqual(readFileSync(p.ticketKeys, 'utf8'), replaced.ticketKeys.toString('base64') + '\n');
    assert.equal(mode(p.ticketKeys), 0o600);
  }
  unlinkSync(p.ticketKeys);
  const log = recorder();
  await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1', logger: log.logger });
  assert.deepEqual(log.msgs, ['Created the TLS session ticket key']);
});
