import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatHostPort, parseHostPort } from './host-port.ts';

test('HOST:PORT: names, IPv4, IPv6 in brackets, port 0', () => {
  assert.deepEqual(parseHostPort('127.0.0.1:0'), { host: '127.0.0.1', port: 0 });
  assert.deepEqual(parseHostPort('[::1]:9100'), { host: '::1', port: 9100 });
  assert.deepEqual(parseHostPort('cp.example.org:6443'), { host: 'cp.example.org', port: 6443 });
  assert.deepEqual(parseHostPort('[fe80::1%eth0]:65535'), { host: 'fe80::1%eth0', port: 65535 });
});

test('an empty host only where the caller has a default', () => {
  assert.deepEqual(parseHostPort(':6443', { defaultHost: '0.0.0.0' }), { host: '0.0.0.0', port: 6443 });
  assert.deepEqual(parseHostPort('[]:6443', { defaultHost: '0.0.0.0' }), { host: '0.0.0.0', port: 6443 });
  assert.throws(() => parseHostPort(':6443'), /not ":6443": the host is missing/);
});

test('anything else is an error naming the input', () => {
  for (const bad of ['9100', 'h', 'h:', 'h:x', 'h:123456', '::1:80', '[::1]80', 'a:b:80', '[::1]:', 'h:-1']) {
    assert.throws(
      () => parseHostPort(bad, { defaultHost: '0.0.0.0' }),
      (e: Error) => e.message.includes(`HOST:PORT`) && e.message.includes(`"${bad}"`),
      bad,
    );
  }
  assert.throws(() => parseHostPort('h:70000'), /HOST:PORT .*"h:70000": the port must be at most 65535/);
});

test('formatHostPort brackets IPv6 hosts and reads back', () => {
  assert.equal(formatHostPort('127.0.0.1', 80), '127.0.0.1:80');
  assert.equal(formatHostPort('::1', 9100), '[::1]:9100');
  assert.deepEqual(parseHostPort(formatHostPort('fe80::1', 0)), { host: 'fe80::1', port: 0 });
});
