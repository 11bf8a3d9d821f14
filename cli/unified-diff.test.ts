import { test } from 'node:test';
import assert from 'node:assert/strict';
import { diffLines, unifiedDiff } from './unified-diff.ts';

const files = { fromFile: 'live/x', toFile: 'merged/x' };

test('equal texts have no diff', () => {
  assert.equal(unifiedDiff('a\nb\n', 'a\nb\n', files), '');
});

test('one changed line with three lines of context, like diff -u', () => {
  const a = ['1', '2', '3', '4', '5', '6', '7', '8'].join('\n') + '\n';
  const b = a.replace('5', 'five');
  assert.equal(
    unifiedDiff(a, b, files),
    ['--- live/x', '+++ merged/x', '@@ -2,7 +2,7 @@', ' 2', ' 3', ' 4', '-5', '+five', ' 6', ' 7', ' 8', ''].join('\n'),
  );
});

test('distant changes make separate hunks; a new file diffs against nothing', () => {
  const a = Array.from({ length: 20 }, (_, i) => `l${i}`).join('\n');
  const b = a.replace('l1\n', 'L1\n').replace('l18', 'L18');
  const text = unifiedDiff(a, b, files);
  assert.equal(text.match(/^@@/gm)?.length, 2);
  assert.match(text, /@@ -1,5 \+1,5 @@/);
  assert.match(text, /@@ -16,5 \+16,5 @@/);
  assert.equal(unifiedDiff('', 'a\nb\n', files), '--- live/x\n+++ merged/x\n@@ -0,0 +1,2 @@\n+a\n+b\n');
});

test('the edit script keeps a longest common subsequence', () => {
  const ops = diffLines(['a', 'b', 'c', 'd'], ['a', 'c', 'd', 'e']);
  assert.deepEqual(
    ops.map((o) => o.op + o.line),
    [' a', '-b', ' c', ' d', '+e'],
  );
});
