/**
 * The agent's part of Node.status.overlay, written with every heartbeat (a merge patch: `address` is the
 * control plane's and is never sent): the public key, the interface as applied on this machine, and per peer
 * what WireGuard reports — last handshake and bytes each way — or, without an interface, why there is none.
 */
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import type { WireGuardSpec } from '../../api/v1alpha1/generated/host-resource.ts';
import type { OverlayPeerStatus } from '../../api/v1alpha1/generated/node.ts';
import type { ResourceResult } from '../engine/types.ts';
import { wgDump } from './wg-tools.ts';

/** The overlay fields the agent writes; `null` removes a field (JSON merge patch). */
export interface AgentOverlayStatus {
  publicKey: string;
  interface: string | null;
  peers: OverlayPeerStatus[] | null;
  message: string | null;
}

/** What `agentOverlayStatus` reads. */
export interface OverlayStatusInput {
  publicKey: string;
  declaration: Declaration | undefined;
  /** The last reconcile's results (the WireGuard resource's failure says why there is no interface). */
  results: readonly ResourceResult[] | undefined;
  /** This machine's name for the interface (`--wireguard-interface`). */
  interfaceName?: string;
}

const NOT_ON_OVERLAY =
  'no WireGuard interface is declared for this node: a node is on the overlay once it has spec.endpoint, an overlay address and a published public key';

/** Reads the interface and builds the overlay status to report. */
export async function agentOverlayStatus(input: OverlayStatusInput): Promise<AgentOverlayStatus> {
  const declared = input.declaration?.spec.resources.find((r) => r.kind === 'WireGuard');
  if (declared?.kind !== 'WireGuard') {
    return { publicKey: input.publicKey, interface: null, peers: null, message: NOT_ON_OVERLAY };
  }
  const spec: WireGuardSpec = declared.spec;
  const ifname = input.interfaceName ?? spec.interface;
  const dump = await wgDump(ifname);
  if (!dump) {
    const failed = input.results?.find((r) => r.id === declared.id && r.message);
    const why = failed?.message ?? 'it has not been applied yet';
    return {
      publicKey: input.publicKey,
      interface: null,
      peers: null,
      message: `interface ${ifname} is not up: ${why}`,
    };
  }
  const names = new Map((spec.peers ?? []).map((p) => [p.publicKey, p.node]));
  const peers = dump.peers.map((p): OverlayPeerStatus => {
    const node = names.get(p.publicKey);
    return {
      ...(node ? { node } : {}),
      publicKey: p.publicKey,
      ...(p.endpoint ? { endpoint: p.endpoint } : {}),
      ...(p.latestHandshake ? { latestHandshake: new Date(p.latestHandshake * 1000).toISOString() } : {}),
      rxBytes: p.rxBytes,
      txBytes: p.txBytes,
    };
  });
  return { publicKey: input.publicKey, interface: ifname, peers, message: null };
}
