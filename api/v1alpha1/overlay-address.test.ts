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
