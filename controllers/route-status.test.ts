import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Certificate, Declaration, Route } from '../api/v1alpha1/generated/index.ts';
import { certificateToWrite, routeStatus } from './route-status.ts';

const NOW = '2026-12-01T12:00:00Z';
const route: Route = {
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Route',
  metadata: { name: 'web', uid: 'u-1', generation: 2 },
  spec: { host: 'www.example.com', node: 'a', port: 8080 },
};
const owned = (over: Partial<Certificate> = {}, ready?: 'True' | 'False'): Certificate => ({
  ...certificateToWrite(route, undefined)!,
  ...(ready
    ? { status: { conditions: [{ type: 'Ready', status: ready, reason: 'R', message: 'm', lastTransitionTime: NOW }] } }
    : {}),
  ...over,
});
const decl = (state: 'Applied' | 'Failed'): Declaration => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Declaration',
  metadata: { name: 'a' },
  spec: { generation: 1, resources: [] },
  status: { results: [{ id: 'route.web/serve', state, ...(state === 'Failed' ? { message: 'bind' } : {}) }] },
});
const ready = (r: ReturnType<typeof routeStatus>) => r.conditions?.find((c) => c.type === 'Ready');

test('the Certificate a Route needs: same name, owned by the Route, one name on its node; spec follows the Route', () => {
  const c = certificateToWrite(route, undefined)!;
  assert.equal(c.metadata.name, 'web');
  assert.deepEqual(c.spec, { dnsNames: ['www.example.com'], node: 'a' });
  assert.deepEqual(
    c.metadata.ownerReferences?.map((r) => [r.kind, r.uid, r.controller]),
    [['Route', 'u-1', true]],
  );
  assert.equal(certificateToWrite(route, c), undefined, 'nothing to write when it matches');
  const moved = certificateToWrite({ ...route, spec: { ...route.spec, node: 'b' } }, c);
  assert.deepEqual(moved?.spec, { dnsNames: ['www.example.com'], node: 'b' });
  const foreign = { ...c, metadata: { ...c.metadata, ownerReferences: [] } };
  assert.equal(certificateToWrite({ ...route, spec: { ...route.spec, node: 'b' } }, foreign), undefined);
});

test('Route Ready: True only when the Certificate is Ready and the node serves it', () => {
  const r = (cert: Certificate | undefined, d?: Declaration) =>
    ready(routeStatus({ route, cert, declaration: d, now: NOW }));
  assert.equal(r(undefined)?.reason, 'CertificatePending');
  assert.equal(r(owned({ metadata: { name: 'web' } }))?.reason, 'CertificateConflict');
  assert.equal(r(owned({}, 'False'))?.reason, 'CertificateNotReady');
  assert.equal(r(owned({}, 'True'))?.reason, 'NotServed');
  assert.match(r(owned({}, 'True'), decl('Failed'))?.message ?? '', /Failed: bind/);
  assert.deepEqual(
    [r(owned({}, 'True'), decl('Applied'))?.status, r(owned({}, 'True'), decl('Applied'))?.reason],
    ['True', 'Served'],
  );
  assert.equal(routeStatus({ route, cert: undefined, declaration: undefined, now: NOW }).certificateRef, 'web');
});
