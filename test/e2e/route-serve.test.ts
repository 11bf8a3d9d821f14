// Issue 10 with the `internal` issuer, end to end with real processes: the real `mesh-control-plane`, a node
// joined with its own credential, and a Route. The Route controller creates its Certificate, the control
// plane issues it, the Declaration carries the files and the HttpsProxy, the agent fetches the material with
// its node credential and serves HTTPS for the name (SNI, to a local service) and 308 on plain HTTP. With the
// control plane SIGKILLed, `mesh-agent status` and /metrics show the unreachable time growing and the remaining
// time shrinking, `meshctl status` says so (and --check fails), and a restarted agent still serves the route
// from its own store. When the control plane returns, the node reports reachable again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { freePort, metricValue, spawnAgent, waitFor } from '../../agent/testing.ts';
import { routeFiles } from '../../api/v1alpha1/render-routes.ts';
import { createMesh, INTERVALS, meshctl } from './mesh-helpers.ts';
import {
  agentStatus,
  httpGet,
  httpsGet,
  joinNode,
  routeObject,
  startBackend,
  waitRouteReady,
} from './route-helpers.ts';

const HOST = 'web.mesh.test';

test('a Route is served over HTTPS by its node with an internal certificate; the clock runs on the node while the control plane is down', async (t) => {
  const mesh = createMesh(t);
  const backend = await startBackend();
  t.after(() => backend.server.close());
  const listen = `127.0.0.1:${await freePort()}`;
  const cp = await mesh.controlPlane({ listen });
  const admin = mesh.admin(cp);
  const a = await joinNode(mesh, cp, admin, 'a');
  const ca = cp.config.caData!;

  // 1. Route → Certificate (owned by the Route) → Ready; the node serves it.
  await admin.create('routes', routeObject('web', HOST, 'a', backend.port));
  await waitRouteReady(admin, 'web').catch((e: Error) => {
    throw new Error(`${e.message}\n--- agent:\n${a.agent.output().slice(-4000)}\n--- cp:\n${cp.output().slice(-4000)}`);
  });
  const cert = await admin.get('certificates', 'web');
  assert.deepEqual(cert.spec, { dnsNames: [HOST], node: 'a' });
  assert.equal(cert.metadata.ownerReferences?.[0]?.kind, 'Route');
  const got = await httpsGet(a.httpsPort, HOST, ca, '/index.html');
  assert.deepEqual([got.status, got.body], [200, 'hello /index.html']);
  assert.ok(got.leaf?.checkIssued(new X509Certificate(ca)), 'the served leaf is issued by the mesh CA');
  assert.equal(new Date(got.leaf!.validTo).toISOString(), new Date(cert.status!.notAfter!).toISOString());
  assert.equal(backend.seen.at(-1)?.['x-forwarded-proto'], 'https');
  const redirect = await httpGet(a.httpPort, HOST, '/x?y=1');
  assert.deepEqual([redirect.status, redirect.location], [308, `https://${HOST}:${a.httpsPort}/x?y=1`]);
  const files = routeFiles('web');
  const root = mesh.node('a').root;
  assert.equal(statSync(join(root, files.key)).mode & 0o777, 0o600, 'the key file is 0600');
  assert.match(readFileSync(join(root, files.cert), 'utf8'), /BEGIN CERTIFICATE/);
  await waitFor(
    async () => (await admin.get('nodes', 'a')).status?.certificates?.[0]?.notAfter === cert.status?.notAfter,
    20_000,
    'Node.status.certificates to name the certificate',
  );

  // 2. meshctl status while reachable: the clock; --check fails without a verified backup and says why.
  const ok = await meshctl(cp.meshconfigPath, ['status']);
  assert.equal(ok.code, 0, ok.stderr);
  assert.match(ok.stdout, /Control plane: +reachable/);
  assert.match(ok.stdout, /^web +a +True/m);
  const check = await meshctl(cp.meshconfigPath, ['status', '--check']);
  assert.equal(check.code, 1, check.stdout);
  assert.match(check.stdout, /Check FAILED:\n {2}- there is no verified backup/);

  // 3. SIGKILL the control plane: the node's clock runs on.
  await cp.kill();
  const stateDir = mesh.node('a').stateDir;
  const first = await waitFor(
    () => {
      const s = agentStatus(stateDir);
      return s.reachable === false && s.unreachableSeconds > 0 && s;
    },
    20_000,
    'mesh-agent status to report the control plane unreachable',
  );
  const later = await waitFor(
    () => {
      const s = agentStatus(stateDir);
      return s.unreachableSeconds >= first.unreachableSeconds + 2 && s;
    },
    20_000,
    'the unreachable time to grow',
  );
  assert.equal(later.certificates[0]?.name, 'web');
  assert.ok(later.certificates[0].remainingSeconds < first.certificates[0].remainingSeconds, 'remaining time shrinks');
  assert.equal(later.certificates[0]?.expired, false);
  assert.equal(Date.parse(later.deadline ?? ''), Date.parse(cert.status!.notAfter!));
  const metrics = await (await fetch(`${a.agent.metrics}/metrics`)).text();
  const lastContact = metricValue(metrics, 'meshctl_control_plane_last_contact_timestamp_seconds')!;
  assert.ok(
    Date.now() / 1000 - lastContact >= later.unreachableSeconds - 1,
    'time since last contact ≥ unreachable time',
  );
  assert.equal(
    metricValue(metrics, `meshctl_certificate_expiration_timestamp_seconds{name="web",node="a"}`),
    Date.parse(cert.status!.notAfter!) / 1000,
  );
  assert.equal(
    metricValue(metrics, 'meshctl_recovery_deadline_timestamp_seconds'),
    Date.parse(cert.status!.notAfter!) / 1000,
  );
  const down = await meshctl(cp.meshconfigPath, ['status', '--agent-state-dir', stateDir]);
  assert.equal(down.code, 0, down.stderr);
  assert.match(down.stdout, /UNREACHABLE at/);
  assert.match(down.stdout, /node a has not reached it for \d+s/);
  assert.match(down.stdout, /new grants \(routes\) and certificate provisioning +STOPPED/);
  const downCheck = await meshctl(cp.meshconfigPath, ['status', '--check']);
  assert.equal(downCheck.code, 1);
  assert.match(downCheck.stdout, /- the control plane at \S+ is unreachable/);

  // 4. The agent restarts with the control plane down: it serves the route from its own store.
  await a.agent.kill('SIGKILL');
  const again = await spawnAgent(['--state-dir', stateDir, ...INTERVALS]);
  mesh.track(again.pid);
  const served = await waitFor(
    () => httpsGet(a.httpsPort, HOST, ca).catch(() => undefined),
    20_000,
    'the restarted agent to serve the route',
  );
  assert.equal(served.status, 200);

  // 5. The control plane returns: the node reports it reachable again.
  await mesh.controlPlane({ listen });
  await waitFor(() => agentStatus(stateDir).reachable === true, 30_000, 'mesh-agent status to report reachable');
});
