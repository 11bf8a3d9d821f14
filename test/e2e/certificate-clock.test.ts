/**
 * The certificate parts of the real `mesh-control-plane` process: a Certificate is issued by the internal
 * issuer, Mesh.status carries the recovery clock (the serving certificate sets it until a 90-day Certificate
 * expires earlier), and the admin's `/metrics` has the certificate and deadline gauges. The process is then
 * SIGKILLed and restarted on the same data directory: the material survives in the store (no re-issue).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import type { Certificate, Mesh } from '../../api/v1alpha1/generated/index.ts';
import { eventually } from '../eventually.ts';
import { httpRequest, spawnControlPlane } from '../harness.ts';

const DAY = 24 * 3_600_000;

test('the control plane issues a Certificate, keeps the recovery clock in Mesh.status and serves /metrics', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-clock-'));
  t.after(() => rmSync(dataDir, { recursive: true, force: true }));
  let cp = await spawnControlPlane({ dataDir });
  t.after(() => cp.stop());
  let client = createClient(cp.config);
  t.after(() => client.close());

  const servingSet = await eventually(
    async () => {
      const mesh: Mesh = await client.get('meshes', 'mesh');
      assert.equal(mesh.status?.recoveryDeadlineSetBy?.kind, 'ServingCertificate', JSON.stringify(mesh.status));
      return mesh;
    },
    { timeoutMs: 30_000 },
  );
  const servingDeadline = Date.parse(servingSet.status!.recoveryDeadline!);
  assert.ok(Math.abs(servingDeadline - Date.now() - 365 * DAY) < DAY, 'the serving certificate runs 365 days');
  assert.ok(Math.abs((servingSet.status?.outageBudgetSeconds ?? 0) - (servingDeadline - Date.now()) / 1000) < 120);

  await client.create('certificates', {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Certificate',
    metadata: { name: 'web' },
    spec: { dnsNames: ['web.mesh.test'], node: 'node-a' },
  });
  const cert: Certificate = await eventually(
    async () => {
      const c: Certificate = await client.get('certificates', 'web');
      assert.equal(c.status?.conditions?.find((x) => x.type === 'Ready')?.status, 'True', JSON.stringify(c.status));
      return c;
    },
    { timeoutMs: 30_000 },
  );
  const mesh = await eventually(
    async () => {
      const m: Mesh = await client.get('meshes', 'mesh');
      assert.deepEqual(m.status?.recoveryDeadlineSetBy, { kind: 'Certificate', name: 'web', node: 'node-a' });
      return m;
    },
    { timeoutMs: 30_000 },
  );
  assert.equal(mesh.status?.recoveryDeadline, cert.status?.notAfter);

  const metrics = await httpRequest(cp.config, 'GET', '/metrics');
  assert.equal(metrics.status, 200, metrics.text);
  const exp = Date.parse(cert.status!.notAfter!) / 1000;
  assert.match(
    metrics.text,
    new RegExp(`meshctl_certificate_expiration_timestamp_seconds\\{name="web",node="node-a"\\} ${exp}`),
  );
  assert.match(metrics.text, /meshctl_certificate_renewal_timestamp_seconds\{name="web",node="node-a"\} \d+/);
  assert.match(metrics.text, new RegExp(`meshctl_recovery_deadline_timestamp_seconds ${exp}`));

  await cp.kill();
  cp = await spawnControlPlane({ dataDir });
  client.close();
  client = createClient(cp.config);
  await eventually(async () => assert.match(cp.output(), /Started controllers/), { timeoutMs: 30_000 });
  const again: Certificate = await client.get('certificates', 'web');
  assert.equal(again.status?.notAfter, cert.status?.notAfter, 'the stored material is reused after a restart');
});
