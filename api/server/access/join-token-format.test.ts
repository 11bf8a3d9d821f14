import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateTokenId, generateTokenSecret, ttlMs, TOKEN_PATTERN, tokenId } from './join-token-format.ts';

test('join tokens: <id>.<secret> of [a-z0-9], 6 and 16 characters, random', () => {
  const ids = new Set(Array.from({ length: 50 }, generateTokenId));
  assert.ok(ids.size > 45);
  for (const id of ids) {
    const token = `${id}.${generateTokenSecret()}`;
    assert.match(token, TOKEN_PATTERN);
    assert.equal(tokenId(token), id);
  }
  for (const bad of [
    'abcdef',
    'abcdef.0123456789abcde',
    'ABCDEF.0123456789abcdef',
    'abcdef.0123456789abcdef0',
    ' abcdef.0123456789abcdef',
  ]) {
    assert.equal(tokenId(bad), undefined, bad);
  }
});

test('ttl durations in Go notation', () => {
  assert.equal(ttlMs('24h'), 86_400_000);
  assert.equal(ttlMs('1h30m'), 5_400_000);
  assert.equal(ttlMs('1.5s'), 1500);
  assert.equal(ttlMs('500ms'), 500);
  assert.equal(ttlMs('0'), 0);
  for (const bad of ['', '1', 'h', '1d', '1h 30m', '-1h']) assert.throws(() => ttlMs(bad), /invalid duration/, bad);
});
