// The pure parts of meshctl wait: --for parsing and when a condition counts as met (kubectl's rules).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../api/meta/types.ts';
import { parseFor, satisfied } from './wait.ts';

const node = (status: string, opts: { generation?: number; observedGeneration?: number } = {}): KubeObject => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Node',
  metadata: { name: 'a', generation: opts.generation },
  status: {
    conditions: [
      {
        type: 'Reachable',
        status,
        reason: 'R',
        message: '',
        lastTransitionTime: '2026-01-01T00:00:00Z',
        observedGeneration: opts.observedGeneration,
      },
    ],
  },
});

test('--for: delete, condition=TYPE (True), condition=TYPE=STATUS; anything else is a usage error', () => {
  assert.deepEqual(parseFor('delete'), { type: 'delete' });
  assert.deepEqual(parseFor('condition=Ready'), { type: 'condition', condition: 'Ready', status: 'True' });
  assert.deepEqual(parseFor('condition=Ready=false'), { type: 'condition', condition: 'Ready', status: 'false' });
  assert.throws(() => parseFor('ready'), /unrecognized condition: "ready"/);
  assert.throws(() => parseFor(undefined), /--for is required/);
});

test('a condition is met case-insensitively, and not while its observedGeneration is behind', () => {
  const want = parseFor('condition=reachable=TRUE');
  assert.equal(satisfied(node('True'), want), true);
  assert.equal(satisfied(node('False'), want), false);
  assert.equal(satisfied(undefined, want), false);
  assert.equal(satisfied(node('True', { generation: 3, observedGeneration: 2 }), want), false);
  assert.equal(satisfied(node('True', { generation: 3, observedGeneration: 3 }), want), true);
  assert.equal(satisfied(undefined, parseFor('delete')), true);
  assert.equal(satisfied(node('True'), parseFor('delete')), false);
});

test('--for=jsonpath: {PATH}=VALUE compares the value as text; {PATH} alone waits for a value', () => {
  const want = parseFor('jsonpath={.status.conditions[?(@.type=="Reachable")].status}=False');
  assert.deepEqual(want, {
    type: 'jsonpath',
    path: '{.status.conditions[?(@.type=="Reachable")].status}',
    value: 'False',
  });
  assert.equal(satisfied(node('False'), want), true);
  assert.equal(satisfied(node('True'), want), false);
  const set = parseFor('jsonpath={.metadata.generation}');
  assert.equal(satisfied(node('True', { generation: 2 }), set), true);
  assert.equal(satisfied(node('True'), set), false);
  assert.equal(satisfied(node('True', { generation: 2 }), parseFor('jsonpath=.metadata.generation=2')), true);
  assert.throws(() => parseFor('jsonpath={.a[}'), /--for=jsonpath/);
});
