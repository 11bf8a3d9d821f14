import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { WireGuardSpec } from '../../api/v1alpha1/generated/host-resource.ts';
import { wgConfigText, wireGuardDiff } from './wg-config.ts';
import { parseWgDump } from './wg-tools.ts';

const K = (c: string): string => c.repeat(43) + '=';
const spec: WireGuardSpec = {
  interface: 'wg-mesh',
  address: '100.64.0.2/10',
  listenPort: 51820,
  forward: true,
  peers: [
    {
      node: 'hub',
      publicKey: K('A'),
      endpoint: '198.18.0.2:51820',
      allowedIPs: ['100.64.0.0/10'],
      persistentKeepalive: 25,
    },
  ],
};
const dump = [
  ['PRIV', K('B'), '51820', 'off'].join('\t'),
  [K('A'), '(none)', '198.18.0.2:51820', '100.64.0.0/10', '1764600000', '1234', '5678', '25'].join('\t'),
].join('\n');

test('wg config: the syncconf text carries key, port and peers, never an address', () => {
  const text = wgConfigText(spec, 'PRIV');
  assert.match(
    text,
    /PrivateKey = PRIV\nListenPort = 51820\n\n\[Peer\]\n# hub\nPublicKey = A+=\nAllowedIPs = 100\.64\.0\.0\/10\nEndpoint = 198\.18\.0\.2:51820\nPersistentKeepalive = 25\n$/,
  );
  assert.doesNotMatch(text, /Address/);
});

test('wg config: `wg show dump` parsed; nothing differs when in sync, each difference named otherwise', () => {
  const d = parseWgDump(dump);
  assert.deepEqual(d.peers[0], {
    publicKey: K('A'),
    endpoint: '198.18.0.2:51820',
    allowedIPs: ['100.64.0.0/10'],
    latestHandshake: 1764600000,
    rxBytes: 1234,
    txBytes: 5678,
    persistentKeepalive: 25,
  });
  const inSync = { exists: true, up: true, addresses: ['100.64.0.2/10'], forwarding: true, ...d };
  assert.deepEqual(wireGuardDiff(spec, K('B'), inSync), []);
  const fields = (o: object): string[] => wireGuardDiff(spec, K('B'), { ...inSync, ...o }).map((c) => c.field);
  assert.deepEqual(fields({ up: false }), ['up']);
  assert.deepEqual(fields({ addresses: [] }), ['address']);
  assert.deepEqual(fields({ forwarding: false }), ['forward']);
  assert.deepEqual(fields({ publicKey: K('C') }), ['privateKey']);
  assert.deepEqual(fields({ peers: [] }), ['peers']);
  assert.deepEqual(fields({ peers: [{ ...d.peers[0], persistentKeepalive: 0 }] }), ['peers']);
  assert.deepEqual(
    wireGuardDiff(spec, K('B'), { exists: false }).map((c) => c.field),
    ['interface'],
  );
});
