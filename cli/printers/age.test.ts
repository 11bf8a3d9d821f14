import { test } from 'node:test';
import assert from 'node:assert/strict';
import { age, humanDuration } from './age.ts';

const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

test('humanDuration follows kubectl (apimachinery HumanDuration)', () => {
  const cases: [number, string][] = [
    [-5 * s, '<invalid>'],
    [-500, '0s'],
    [0, '0s'],
    [5 * s, '5s'],
    [119 * s, '119s'],
    [2 * m, '2m'],
    [3 * m + 10 * s, '3m10s'],
    [10 * m + 59 * s, '10m'],
    [179 * m, '179m'],
    [3 * h, '3h'],
    [5 * h + 30 * m, '5h30m'],
    [8 * h + 30 * m, '8h'],
    [47 * h, '47h'],
    [2 * d, '2d'],
    [4 * d + 5 * h, '4d5h'],
    [8 * d, '8d'],
    [400 * d, '400d'],
    [730 * d, '2y'],
    [800 * d, '2y70d'],
    [9 * 365 * d, '9y'],
  ];
  for (const [ms, want] of cases) assert.equal(humanDuration(ms), want, `${ms} ms`);
});

test('age of a timestamp, and <unknown> for missing or unparsable ones', () => {
  const now = Date.parse('2026-01-01T12:00:00Z');
  assert.equal(age('2026-01-01T11:59:55Z', now), '5s');
  assert.equal(age('2025-12-28T12:00:00Z', now), '4d');
  assert.equal(age(undefined, now), '<unknown>');
  assert.equal(age('yesterday', now), '<unknown>');
});
