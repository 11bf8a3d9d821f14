import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from './fake-clock.ts';
import { closestToExpiry, recoveryClock, type Expiring } from './recovery-clock.ts';

const T0 = Date.parse('2030-01-01T00:00:00Z');
const H = 3_600_000;
const D = 24 * H;

const cert = (name: string, node: string, notAfter: number): Expiring => ({
  kind: 'Certificate',
  name,
  node,
  notAfter,
});

test('no certificates: no deadline and no budget', () => {
  const clock = new FakeClock({ start: T0 });
  assert.deepEqual(recoveryClock([], clock.now()), { expired: [] });
});

test('several nodes: the earliest notAfter of any node sets the deadline, and the budget shrinks as time passes', () => {
  const clock = new FakeClock({ start: T0 });
  const items = [
    cert('web', 'node-a', T0 + 60 * D),
    cert('api', 'node-b', T0 + 20 * D),
    cert('blog', 'node-c', T0 + 45 * D),
  ];
  const c = recoveryClock(items, clock.now());
  assert.equal(c.deadline, T0 + 20 * D);
  assert.equal(c.budgetSeconds, (20 * D) / 1000);
  assert.deepEqual(c.setBy, items[1]);
  assert.deepEqual(c.expired, []);
  clock.advance(5 * D + 500);
  const later = recoveryClock(items, clock.now());
  assert.equal(later.deadline, T0 + 20 * D, 'the deadline does not move with time');
  assert.equal(later.budgetSeconds, (15 * D) / 1000 - 1, 'whole seconds, rounded down');
});

test('the serving certificate sets the deadline when it is the earliest', () => {
  const clock = new FakeClock({ start: T0 });
  const serving: Expiring = { kind: 'ServingCertificate', name: 'serving', notAfter: T0 + 10 * D };
  const ca: Expiring = { kind: 'CertificateAuthority', name: 'ca', notAfter: T0 + 3650 * D };
  const c = recoveryClock([cert('web', 'node-a', T0 + 30 * D), ca, serving], clock.now());
  assert.equal(c.setBy?.kind, 'ServingCertificate');
  assert.equal(c.deadline, T0 + 10 * D);
});

test('expired certificates: the deadline has passed, the budget is negative, and they are listed earliest first', () => {
  const clock = new FakeClock({ start: T0 });
  const items = [cert('late', 'node-a', T0 - H), cert('valid', 'node-b', T0 + D), cert('older', 'node-a', T0 - 2 * H)];
  const c = recoveryClock(items, clock.now());
  assert.equal(c.deadline, T0 - 2 * H);
  assert.equal(c.budgetSeconds, -7200);
  assert.deepEqual(
    c.expired.map((e) => e.name),
    ['older', 'late'],
  );
  clock.advance(2 * D);
  assert.deepEqual(
    recoveryClock(items, clock.now()).expired.map((e) => e.name),
    ['older', 'late', 'valid'],
    'a certificate that expires as time passes is reported expired',
  );
});

test('a notAfter that is not a number is ignored; ties go to the first', () => {
  const items = [cert('bad', 'a', NaN), cert('one', 'a', T0 + D), cert('two', 'b', T0 + D)];
  const c = recoveryClock(items, T0);
  assert.equal(c.setBy?.name, 'one');
  assert.deepEqual(
    closestToExpiry(items.slice(1), 1).map((i) => i.name),
    ['one'],
  );
});
