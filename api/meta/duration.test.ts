import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseDuration } from './duration.ts';

test('Go durations: one or more number-unit parts, fractions, every unit', () => {
  const cases: Array<[string, number]> = [
    ['40s', 40_000],
    ['1m30s', 90_000],
    ['1h30m', 5_400_000],
    ['24h', 86_400_000],
    ['250ms', 250],
    ['1.5h', 5_400_000],
    ['1.5s', 1500],
    ['.5s', 500],
    ['1.s', 1000],
    ['2h45m10s', 9_910_000],
    ['1000ns', 0.001],
    ['3us', 0.003],
    ['3µs', 0.003],
    ['1h1ms', 3_600_001],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
});

test('zero only where the caller allows it', () => {
  assert.equal(parseDuration('0', { allowZero: true }), 0);
  assert.equal(parseDuration('0s', { allowZero: true }), 0);
  assert.throws(() => parseDuration('0'), /invalid duration "0": must be greater than zero/);
  assert.throws(() => parseDuration('0ms'), /must be greater than zero/);
});

test('anything else is an error naming the input', () => {
  for (const bad of [
    '',
    '1',
    '40',
    'h',
    's',
    '1d',
    '1h 30m',
    '1m 30s',
    '-1h',
    '-5s',
    '+5s',
    '5x',
    '5s!',
    ' 5s',
    '.s',
    '1..5s',
    '00',
  ]) {
    assert.throws(
      () => parseDuration(bad, { allowZero: true }),
      (e: Error) => e.message.startsWith(`invalid duration "${bad}": expected`),
      bad,
    );
  }
});
