import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { evalJsonPath, parseJsonPath } from './json-path.ts';

const obj = {
  metadata: { name: 'web', labels: { 'app.kubernetes.io/name': 'web', tier: 'front' } },
  spec: { dnsNames: ['a.example.com', 'b.example.com'], port: 0, enabled: false, nested: { 'a.b': 1 } },
  status: {
    conditions: [
      { type: 'Issuing', status: 'False', reason: 'Done' },
      { type: 'Ready', status: 'True', reason: 'Issued', observedGeneration: 3 },
    ],
  },
};

describe('evalJsonPath', () => {
  it('follows dotted keys and keeps falsy values', () => {
    assert.equal(evalJsonPath(obj, '.metadata.name'), 'web');
    assert.equal(evalJsonPath(obj, '.spec.port'), 0);
    assert.equal(evalJsonPath(obj, '.spec.enabled'), false);
    assert.deepEqual(evalJsonPath(obj, '.spec.dnsNames'), ['a.example.com', 'b.example.com']);
  });

  it('accepts the $ and {…} wrappers of kubectl', () => {
    assert.equal(evalJsonPath(obj, '{.metadata.name}'), 'web');
    assert.equal(evalJsonPath(obj, '$.metadata.name'), 'web');
    assert.equal(evalJsonPath(obj, '{$.metadata.name}'), 'web');
  });

  it('indexes arrays, from the end too', () => {
    assert.equal(evalJsonPath(obj, '.spec.dnsNames[0]'), 'a.example.com');
    assert.equal(evalJsonPath(obj, '.spec.dnsNames[-1]'), 'b.example.com');
    assert.equal(evalJsonPath(obj, '.spec.dnsNames[5]'), undefined);
  });

  it('reads keys with dots and slashes, quoted or escaped', () => {
    assert.equal(evalJsonPath(obj, ".metadata.labels['app.kubernetes.io/name']"), 'web');
    assert.equal(evalJsonPath(obj, '.metadata.labels["app.kubernetes.io/name"]'), 'web');
    assert.equal(evalJsonPath(obj, '.metadata.labels.app\\.kubernetes\\.io/name'), 'web');
    assert.equal(evalJsonPath(obj, ".spec.nested['a.b']"), 1);
  });

  it('filters a list by a field and takes the first match', () => {
    assert.equal(evalJsonPath(obj, '.status.conditions[?(@.type=="Ready")].status'), 'True');
    assert.equal(evalJsonPath(obj, ".status.conditions[?(@.type == 'Ready')].reason"), 'Issued');
    assert.equal(evalJsonPath(obj, '.status.conditions[?(@.type!="Ready")].status'), 'False');
    assert.equal(evalJsonPath(obj, '.status.conditions[?(@.observedGeneration==3)].type'), 'Ready');
    assert.equal(evalJsonPath(obj, '.status.conditions[?(@.observedGeneration)].type'), 'Ready');
    assert.equal(evalJsonPath(obj, '.status.conditions[?(@.type=="Gone")].status'), undefined);
  });

  it('collects every value under a wildcard', () => {
    assert.deepEqual(evalJsonPath(obj, '.status.conditions[*].type'), ['Issuing', 'Ready']);
    assert.deepEqual(evalJsonPath(obj, '.metadata.labels.*'), ['web', 'front']);
    assert.deepEqual(evalJsonPath(obj, '.spec.missing[*]'), []);
  });

  it('yields undefined for absent paths and non-objects, never throws on data', () => {
    assert.equal(evalJsonPath(obj, '.status.notAfter'), undefined);
    assert.equal(evalJsonPath(obj, '.metadata.name.first'), undefined);
    assert.equal(evalJsonPath(null, '.a.b'), undefined);
    assert.equal(evalJsonPath({ a: [1] }, '.a.length'), undefined);
    assert.equal(evalJsonPath({ a: { toString: 1 } }, '.b.toString'), undefined);
    assert.deepEqual(evalJsonPath(obj, ''), obj);
  });

  it('rejects bad syntax with a message naming the path', () => {
    assert.throws(() => parseJsonPath('.a[?(@.x ~ 1)]'), /invalid JSONPath ".a\[\?\(@.x ~ 1\)\]"/);
    assert.throws(() => parseJsonPath('.a[0'), /unclosed \[/);
    assert.throws(() => parseJsonPath('.a..b'), /empty key/);
    assert.throws(() => parseJsonPath('a.b'), /unexpected "a"/);
  });
});
