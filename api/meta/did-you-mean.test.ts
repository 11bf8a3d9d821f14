import { test } from 'node:test';
import assert from 'node:assert/strict';
import { closest, didYouMean, editDistance } from './did-you-mean.ts';

test('editDistance counts insertions, deletions, substitutions and adjacent swaps as one edit each', () => {
  assert.equal(editDistance('node', 'node'), 0);
  assert.equal(editDistance('nodez', 'nodes'), 1);
  assert.equal(editDistance('nodee', 'node'), 1);
  assert.equal(editDistance('ndoe', 'node'), 1);
  assert.equal(editDistance('', 'abc'), 3);
  assert.equal(editDistance('kitten', 'sitting'), 3);
});

test('closest suggests a near name only, case-insensitively, the nearest first', () => {
  assert.equal(closest('nodez', ['modules', 'nodes', 'node']), 'nodes');
  assert.equal(closest('Asignment', ['assignment', 'node']), 'assignment');
  assert.equal(closest('nodes', ['nodes']), undefined, 'an exact match is no suggestion');
  assert.equal(closest('ab', ['ac']), 'ac');
  assert.equal(closest('xyz', ['nodes', 'modules']), undefined);
  assert.equal(closest('certificatse', ['certificates', 'certificate']), 'certificates');
});

test('didYouMean words the suggestion, or says nothing', () => {
  assert.equal(didYouMean('spec.nodee', ['spec.node', 'spec.module']), '; did you mean "spec.node"?');
  assert.equal(didYouMean('spec.banana', ['spec.node']), '');
});
