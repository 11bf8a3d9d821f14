/**
 * The WireGuard driver's pure half: the `wg syncconf` text of a declared interface, and what differs
 * between a declared interface and what `ip` and `wg` report. No I/O.
 */
import type { WireGuardSpec } from '../../api/v1alpha1/generated/host-resource.ts';
import type { Change, Observed } from '../engine/types.ts';
import type { WgPeerDump } from './wg-tools.ts';

/** What the WireGuard driver sees. */
export interface WireGuardObserved extends Observed {
  up?: boolean;
  addresses?: string[];
  publicKey?: string;
  listenPort?: number;
  peers?: WgPeerDump[];
  /** net.ipv4.ip_forward is on (read only when the spec asks for forwarding). */
  forwarding?: boolean;
  /** Not a WireGuard interface (or `wg` cannot read it). */
  notWireGuard?: boolean;
}

/** The config `wg syncconf` applies: the private key, the port and the peers (no addresses: `ip` sets those). */
export function wgConfigText(spec: WireGuardSpec, privateKey: string): string {
  const lines = ['[Interface]', `PrivateKey = ${privateKey}`];
  if (spec.listenPort !== undefined) lines.push(`ListenPort = ${spec.listenPort}`);
  for (const p of spec.peers ?? []) {
    lines.push('', '[Peer]');
    if (p.node) lines.push(`# ${p.node}`);
    lines.push(`PublicKey = ${p.publicKey}`, `AllowedIPs = ${p.allowedIPs.join(', ')}`);
    if (p.endpoint) lines.push(`Endpoint = ${p.endpoint}`);
    if (p.persistentKeepalive) lines.push(`PersistentKeepalive = ${p.persistentKeepalive}`);
  }
  return lines.join('\n') + '\n';
}

/** A literal IPv4 `a.b.c.d:port` (a host name resolves, so only literals are compared with what wg reports). */
const LITERAL_ENDPOINT = /^\d{1,3}(\.\d{1,3}){3}:\d+$/;

function peerChanges(spec: WireGuardSpec, observed: WgPeerDump[]): Change[] {
  const changes: Change[] = [];
  const seen = new Map(observed.map((p) => [p.publicKey, p]));
  for (const want of spec.peers ?? []) {
    const name = want.node ?? want.publicKey;
    const got = seen.get(want.publicKey);
    seen.delete(want.publicKey);
    if (!got) {
      changes.push({ field: 'peers', message: `peer ${name} is missing` });
      continue;
    }
    const allowed = [...want.allowedIPs].sort();
    if (allowed.join(',') !== got.allowedIPs.join(','))
      changes.push({ field: 'peers', message: `peer ${name}: allowed IPs ${got.allowedIPs.join(',')} → ${allowed}` });
    if ((want.persistentKeepalive ?? 0) !== got.persistentKeepalive)
      changes.push({ field: 'peers', message: `peer ${name}: keepalive → ${want.persistentKeepalive ?? 0}` });
    if (want.endpoint && LITERAL_ENDPOINT.test(want.endpoint) && want.endpoint !== got.endpoint)
      changes.push({ field: 'peers', message: `peer ${name}: endpoint ${got.endpoint ?? 'none'} → ${want.endpoint}` });
  }
  for (const extra of seen.keys()) changes.push({ field: 'peers', message: `peer ${extra} is not declared` });
  return changes;
}

/** What differs between the declared interface (with our public key) and the observed one; [] when in sync. */
export function wireGuardDiff(spec: WireGuardSpec, publicKey: string, o: WireGuardObserved): Change[] {
  if (!o.exists) return [{ field: 'interface', message: `interface ${spec.interface} is absent` }];
  if (o.notWireGuard) return [{ field: 'interface', message: `${spec.interface} is not a WireGuard interface` }];
  const changes: Change[] = [];
  if (o.publicKey !== publicKey) changes.push({ field: 'privateKey', message: 'the interface has another key' });
  if (spec.listenPort !== undefined && o.listenPort !== spec.listenPort)
    changes.push({ field: 'listenPort', message: `listen port ${o.listenPort} → ${spec.listenPort}` });
  const addrs = (o.addresses ?? []).join(',');
  if (addrs !== spec.address)
    changes.push({ field: 'address', message: `address ${addrs || 'none'} → ${spec.address}` });
  if (!o.up) changes.push({ field: 'up', message: 'interface is down' });
  if (spec.forward && !o.forwarding) changes.push({ field: 'forward', message: 'IPv4 forwarding is off' });
  return [...changes, ...peerChanges(spec, o.peers ?? [])];
}
