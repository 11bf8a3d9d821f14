import { test } from 'node:test';
import assert from 'node:assert/strict';
import { allocateAddress, inRange, parseIpv4Cidr } from './overlay-address.ts';

test('overlay addresses: the lowest free host address, never the network address, never one in use', () => {
  assert.equal(allocateAddress('100.64.0.0/10', new Set()), '100.64.0.1');
  assert.equal(allocateAddress('100.64.0.0/10', new Set(['100.64.0.1', '100.64.0.3'])), '100.64.0.2');
  assert.equal(allocateAddress('10.0.0.0/30', new Set(['10.0.0.1', '10.0.0.2'])), undefined, 'a full /30');
  assert.equal(allocateAddress('10.0.0.9/24', new Set()), '10.0.0.1', 'the base is masked');
  assert.equal(allocateAddress('fd00::/64', new Set()), undefined, 'IPv6 is not allocated');
});

test('overlay addresses: parsing and range checks', () => {
  assert.deepEqual(parseIpv4Cidr('100.64.0.0/10'), { base: (100 * 256 + 64) * 65536, prefix: 10 });
  assert.equal(parseIpv4Cidr('100.64.0.0'), undefined);
  assert.equal(parseIpv4Cidr('300.64.0.0/10'), undefined);
  const r = parseIpv4Cidr('100.64.0.0/10')!;
  assert.ok(inRange('100.127.255.254', r));
  assert.ok(!inRange('100.128.0.1', r));
});

test('overlay addresses: after the last one given out, wrapping around; N allocations look at about N addresses', () => {
  assert.equal(allocateAddress('100.64.0.0/10', new Set(), '100.64.0.7'), '100.64.0.8');
  assert.equal(allocateAddress('10.0.0.0/29', new Set(['10.0.0.1']), '10.0.0.6'), '10.0.0.2', 'wraps, skipping used');
  assert.equal(allocateAddress('10.0.0.0/29', new Set(), '192.0.2.1'), '10.0.0.1', 'outside the range: the lowest');
  const used = new Set<string>();
  let lookups = 0;
  const counting = { has: (a: string) => (lookups++, used.has(a)) };
  let last: string | undefined;
  for (let i = 0; i < 3000; i++) {
    const a = allocateAddress('100.64.0.0/10', counting, last)!;
    assert.ok(!used.has(a), a);
    used.add(a);
    last = a;
  }
  assert.equal(used.size, 3000);
  assert.ok(lookups <= 3000, `${lookups} lookups for 3000 allocations (lowest-first would take ~4.5 million)`);
});
