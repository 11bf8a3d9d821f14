import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from '../../meta/api-error.ts';
import { checkDotSegments, matchRoute } from './routes.ts';

const P = '/apis/meshctl.dev/v1alpha1';

test('resource paths: plain segments as they are, percent-encoded ones decoded, malformed ones a 400', () => {
  assert.deepEqual(matchRoute(`${P}/nodes/node-1/status`), {
    type: 'resource',
    plural: 'nodes',
    name: 'node-1',
    subresource: 'status',
    watchPath: false,
  });
  assert.deepEqual(matchRoute(`${P}/files/a%3Ab/`), {
    type: 'resource',
    plural: 'files',
    name: 'a:b',
    watchPath: false,
  });
  assert.deepEqual(matchRoute(`${P}/watch/nodes/x`), { type: 'resource', plural: 'nodes', name: 'x', watchPath: true });
  assert.throws(
    () => matchRoute(`${P}/nodes/%zz`),
    (e) => e instanceof ApiError && e.code === 400,
  );
});

test('health, metrics and discovery paths are told apart from resources', () => {
  assert.deepEqual(matchRoute('/healthz'), { type: 'health' });
  assert.deepEqual(matchRoute('/readyz/store'), { type: 'health' });
  assert.deepEqual(matchRoute('/metrics'), { type: 'metrics' });
  assert.deepEqual(matchRoute(P), { type: 'discovery', doc: 'resources' });
  assert.deepEqual(matchRoute(`${P}/healthz`), { type: 'resource', plural: 'healthz', watchPath: false });
  assert.equal(matchRoute('/nothing/here'), undefined);
});

test('dot segments, plain or percent-encoded in any case, are refused; dots elsewhere are not', () => {
  for (const bad of [`${P}/nodes/..`, `${P}/nodes/%2e%2e`, `${P}/nodes/%2E`, `${P}/./nodes`, `${P}/nodes/.?x=1`]) {
    assert.throws(
      () => checkDotSegments(bad),
      (e) => e instanceof ApiError && e.code === 400,
      bad,
    );
  }
  for (const ok of [
    `${P}/nodes/a.b`,
    `${P}/nodes/a%2e`,
    `${P}/nodes/x?fieldSelector=a.b`,
    `${P}/nodes/node-1/status`,
  ]) {
    assert.doesNotThrow(() => checkDotSegments(ok), ok);
  }
});
