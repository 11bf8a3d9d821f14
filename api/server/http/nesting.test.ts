import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonDeeperThan, yamlDeeperThan } from './nesting.ts';

const nested = (n: number): string => `${'['.repeat(n)}${']'.repeat(n)}`;

test('JSON depth counts brackets outside strings only, escapes honoured', () => {
  assert.equal(jsonDeeperThan(`{"a":${nested(9)}}`, 10), false);
  assert.equal(jsonDeeperThan(`{"a":${nested(10)}}`, 10), true);
  assert.equal(jsonDeeperThan(`{"a":"${'['.repeat(1000)}","b":"\\"[[[["}`, 10), false);
  assert.equal(jsonDeeperThan(`{"a":"\\\\",${'['.repeat(20)}`, 10), true);
});

test('JSON depth: many brackets side by side are not depth', () => {
  const siblings = `[${Array.from({ length: 200 }, () => '{"a":[1]}').join(',')}]`;
  assert.equal(jsonDeeperThan(siblings, 10), false);
  assert.equal(jsonDeeperThan(`[${siblings.slice(0, -1)},${nested(9)}]`, 10), true);
});

test('YAML depth counts flow, block and compact nesting, not brackets in scalars', () => {
  assert.equal(yamlDeeperThan(`a: ${nested(9)}`, 10), false);
  assert.equal(yamlDeeperThan(`a: ${nested(10)}`, 10), true);
  assert.equal(yamlDeeperThan(Array.from({ length: 11 }, (_, i) => `${' '.repeat(i)}a:`).join('\n'), 10), true);
  assert.equal(yamlDeeperThan(Array.from({ length: 9 }, (_, i) => `${' '.repeat(i)}a:`).join('\n') + ' x', 10), false);
  assert.equal(yamlDeeperThan(`a:\n${'- '.repeat(10)}x`, 10), true);
  assert.equal(yamlDeeperThan(`a: "${'['.repeat(100)}"\nb: |\n  ${'{'.repeat(100)}\nc: it's [[[[`, 10), false);
  assert.equal(yamlDeeperThan(`---\na: 1\n---\nb: ${nested(20)}`, 10), true);
});

test('a 100,000-level body is measured without recursion', () => {
  assert.equal(jsonDeeperThan('['.repeat(100_000), 100), true);
  assert.equal(yamlDeeperThan(`a: ${'['.repeat(100_000)}`, 100), true);
});
