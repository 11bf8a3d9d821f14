import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EXIT_USAGE, UsageError } from './usage-error.ts';

test('a usage error carries its message and name, and exits 2', () => {
  const e = new UsageError('unknown flag: --x');
  assert.ok(e instanceof Error);
  assert.equal(e.message, 'unknown flag: --x');
  assert.equal(e.name, 'UsageError');
  assert.equal(EXIT_USAGE, 2);
});
