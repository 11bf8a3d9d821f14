import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rfc3339 } from './timestamp.ts';

test('RFC 3339 in UTC with second precision, now by default', () => {
  assert.equal(rfc3339(Date.parse('2030-01-01T00:00:00.999Z')), '2030-01-01T00:00:00Z');
  assert.equal(rfc3339(0), '1970-01-01T00:00:00Z');
  const before = Math.floor(Date.now() / 1000) * 1000;
  const now = Date.parse(rfc3339());
  assert.ok(now >= before && now <= Date.now(), rfc3339());
});
