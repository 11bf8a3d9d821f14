import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiError } from './api-error.ts';
import { matchesSelectors, parseFieldSelector, parseLabelSelector } from './selectors.ts';
import type { KubeObject } from './types.ts';

function obj(labels: Record<string, string>, spec: unknown = {}): KubeObject {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'n1', labels }, spec };
}

const web = obj({ app: 'web', tier: 'front', 'meshctl.dev/site': 'home' }, { node: 'a', port: 80, on: true });
const db = obj({ app: 'db' }, { node: 'b' });
const bare = obj({});

test('equality, inequality and double equals', () => {
  assert.equal(matchesSelectors(web, 'app=web'), true);
  assert.equal(matchesSelectors(web, 'app==web'), true);
  assert.equal(matchesSelectors(db, 'app=web'), false);
  assert.equal(matchesSelectors(db, 'app!=web'), true);
  assert.equal(matchesSelectors(bare, 'app!=web'), true, 'a missing label is != anything');
  assert.equal(matchesSelectors(web, 'app = web , tier=front'), true, 'spaces are allowed around operators and commas');
  assert.equal(matchesSelectors(web, 'app=web,tier=back'), false);
});

test('existence and set-based requirements', () => {
  assert.equal(matchesSelectors(web, 'tier'), true);
  assert.equal(matchesSelectors(db, 'tier'), false);
  assert.equal(matchesSelectors(db, '!tier'), true);
  assert.equal(matchesSelectors(web, '!tier'), false);
  assert.equal(matchesSelectors(web, 'app in (db, web)'), true);
  assert.equal(matchesSelectors(web, 'app in (db)'), false);
  assert.equal(matchesSelectors(bare, 'app in (web)'), false);
  assert.equal(matchesSelectors(web, 'app notin (db)'), true);
  assert.equal(matchesSelectors(db, 'app notin (db,x)'), false);
  assert.equal(matchesSelectors(bare, 'app notin (db)'), true, 'notin matches objects without the label');
  assert.equal(matchesSelectors(web, 'meshctl.dev/site=home,app in (web),!missing'), true);
});

test('empty selectors match everything', () => {
  assert.deepEqual(parseLabelSelector(''), []);
  assert.deepEqual(parseFieldSelector('  '), []);
  assert.equal(matchesSelectors(bare, '', ''), true);
  assert.equal(matchesSelectors(bare), true);
});

test('field selectors on metadata and any dotted path', () => {
  assert.equal(matchesSelectors(web, undefined, 'metadata.name=n1'), true);
  assert.equal(matchesSelectors(web, undefined, 'metadata.name==n2'), false);
  assert.equal(matchesSelectors(web, undefined, 'spec.node=a'), true);
  assert.equal(matchesSelectors(db, undefined, 'spec.node!=a'), true);
  assert.equal(
    matchesSelectors(web, undefined, 'spec.port=80,spec.on=true'),
    true,
    'numbers and booleans compare as text',
  );
  assert.equal(matchesSelectors(bare, undefined, 'spec.node='), true, 'a missing field is the empty string');
  assert.equal(matchesSelectors(web, 'app=web', 'spec.node=b'), false, 'both selectors must hold');
});

test('parsed selectors can be reused', () => {
  const l = parseLabelSelector('app in (web,db)');
  const f = parseFieldSelector('spec.node!=zz');
  assert.deepEqual(l, [{ key: 'app', op: 'in', values: ['web', 'db'] }]);
  assert.equal(matchesSelectors(web, l, f), true);
  assert.equal(matchesSelectors(bare, l, f), false);
});

function badRequest(fn: () => unknown, pattern: RegExp): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof ApiError, 'an ApiError');
    assert.equal(e.reason, 'BadRequest');
    assert.equal(e.code, 400);
    assert.match(e.message, pattern);
    return true;
  });
}

test('malformed label selectors are BadRequest with a readable message', () => {
  badRequest(() => parseLabelSelector('app in (web'), /unbalanced "\("/);
  badRequest(() => parseLabelSelector('app in web)'), /unbalanced "\)"/);
  badRequest(() => parseLabelSelector('app=web,,x'), /empty requirement/);
  badRequest(() => parseLabelSelector('app in ()'), /must not be empty/);
  badRequest(() => parseLabelSelector('app=we b'), /is not a requirement/);
  badRequest(() => parseLabelSelector('-app=x'), /invalid label key "-app"/);
  badRequest(() => parseLabelSelector('app=bad!value'), /not a requirement|invalid label value/);
  badRequest(() => parseLabelSelector('Bad_Prefix/app=x'), /prefix must be a DNS subdomain/);
  badRequest(() => parseLabelSelector(`app=${'v'.repeat(64)}`), /invalid label value/);
});

test('malformed field selectors are BadRequest with a readable message', () => {
  badRequest(() => parseFieldSelector('spec.node'), /is not a requirement/);
  badRequest(() => parseFieldSelector('spec..node=x'), /invalid field path/);
  badRequest(() => matchesSelectors(web, undefined, 'nope'), /unable to parse selector "nope"/);
});
