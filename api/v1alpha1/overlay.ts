/**
 * The WireGuard overlay's shape (ADR 0053 and 0050): pure functions, no I/O. The overlay hub is declared —
 * the node the `overlay-hub` module is assigned to — never elected. The hub peers with every node and
 * forwards; every other node peers with the hub (AllowedIPs: the whole overlay) and directly with the nodes
 * of its own site (their /32s; the longest prefix wins). So a path between two nodes is direct when they
 * share a site or one of them is the hub (it keeps working while the hub is down), and goes through the
 * hub otherwise (it stops while the hub is down).
 *
 * A node is on the overlay once it has an overlay address (the control plane's), a public key (its
 * agent's) and an underlay endpoint (Node.spec.endpoint). A node's WireGuard resource names only itself,
 * the hub and its own site: a node joining or leaving changes the hub's Declaration and its site's, and no
 * other (O(site) per change; `overlayNodesAffected` is the controller's side of that rule).
 *
 * Timers (measured in ../shared/recipes/wireguard-netns.md): every peer with an endpoint gets a persistent
 * keepalive, and the hub knows the spokes' endpoints, so a restarted hub handshakes with every spoke the
 * moment its interface comes up (about 30 ms) instead of waiting for a spoke's 15 s retry.
 */
import type { Assignment, DeclaredResource, Mesh, Node, WireGuardPeer, WireGuardSpec } from './generated/index.ts';
import { DEFAULT_OVERLAY_CIDR, parseIpv4Cidr } from './overlay-address.ts';
import { OVERLAY_HUB_MODULE } from './builtin-modules.ts';

/** The owner of the overlay's resource in a Declaration (not an assignment: the control plane renders it). */
export const OVERLAY_OWNER = 'mesh-overlay';
/** The id of the overlay's WireGuard resource in every Declaration. */
export const OVERLAY_RESOURCE_ID = `${OVERLAY_OWNER}/wireguard`;
/** The WireGuard interface every node gets (an agent may name its own: `mesh-agent run --wireguard-interface`). */
export const OVERLAY_INTERFACE = 'wg-mesh';
/** The UDP port WireGuard listens on when the Mesh names none. */
export const DEFAULT_OVERLAY_PORT = 51820;
/** Persistent keepalive of every peer with an endpoint, in seconds. */
export const OVERLAY_KEEPALIVE_SECONDS = 25;

/** How two nodes reach each other on the overlay: directly, or through the hub. */
export type OverlayPath = 'direct' | 'hub';

/** The node the `overlay-hub` module is assigned to, if any. */
export function hubOf(assignments: readonly Assignment[]): string | undefined {
  return assignments.find((a) => a.spec.module === OVERLAY_HUB_MODULE)?.spec.node;
}

/** Whether two nodes are co-located: both name the same site. */
export function sameSite(a: Node, b: Node): boolean {
  return a.spec?.site !== undefined && a.spec.site === b.spec?.site;
}

/** The path between two nodes (the ADR 0053 table's row): direct when co-located or one is the hub. */
export function pathBetween(a: Node, b: Node, hub: string | undefined): OverlayPath {
  const names = [a.metadata.name, b.metadata.name];
  return sameSite(a, b) || (hub !== undefined && names.includes(hub)) ? 'direct' : 'hub';
}

/** Whether the node has everything the overlay needs: address, public key and endpoint. */
export function onOverlay(n: Node): boolean {
  return Boolean(n.status?.overlay?.address && n.status.overlay.publicKey && n.spec?.endpoint);
}

/** The overlay's CIDR and port from the Mesh (defaults when absent). */
export function overlaySettings(mesh: Mesh | undefined): { cidr: string; port: number } {
  const o = mesh?.spec?.overlay;
  return { cidr: o?.cidr ?? DEFAULT_OVERLAY_CIDR, port: o?.port ?? DEFAULT_OVERLAY_PORT };
}

/** What `renderOverlay` needs: the node, every Node, the hub's name and the Mesh. */
export interface OverlayInput {
  node: string;
  nodes: readonly Node[];
  hub: string | undefined;
  mesh: Mesh | undefined;
}

function peer(n: Node, allowedIPs: string[]): WireGuardPeer {
  const o = n.status!.overlay!;
  return {
    node: n.metadata.name,
    publicKey: o.publicKey!,
    endpoint: n.spec!.endpoint!,
    allowedIPs,
    persistentKeepalive: OVERLAY_KEEPALIVE_SECONDS,
  };
}

/** The node's WireGuard spec, or undefined when it is not on the overlay. */
export function overlaySpec(input: OverlayInput): WireGuardSpec | undefined {
  const self = input.nodes.find((n) => n.metadata.name === input.node);
  const { cidr, port } = overlaySettings(input.mesh);
  const range = parseIpv4Cidr(cidr);
  if (!self || !onOverlay(self) || !range) return undefined;
  const isHub = input.hub === input.node;
  const others = input.nodes
    .filter((n) => n.metadata.name !== input.node && onOverlay(n))
    .sort((a, b) => ((a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1));
  const peers = others.flatMap((n): WireGuardPeer[] => {
    const host = `${n.status!.overlay!.address!}/32`;
    if (n.metadata.name === input.hub) return [peer(n, [cidr])];
    if (isHub || sameSite(self, n)) return [peer(n, [host])];
    return [];
  });
  return {
    interface: OVERLAY_INTERFACE,
    address: `${self.status!.overlay!.address!}/${range.prefix}`,
    listenPort: port,
    ...(isHub ? { forward: true } : {}),
    peers,
  };
}

/** The node's overlay resource for its Declaration (owner OVERLAY_OWNER), or undefined when it is not on the overlay. */
export function renderOverlay(input: OverlayInput): DeclaredResource | undefined {
  const spec = overlaySpec(input);
  if (!spec) return undefined;
  return { id: OVERLAY_RESOURCE_ID, owner: OVERLAY_OWNER, kind: 'WireGuard', spec };
}

/**
 * The nodes whose overlay resource may change when `changed` did (joined, left, or changed its site,
 * endpoint, address or key): itself, the hub, the nodes of its site, and the nodes whose Declaration still
 * names it as a peer (`naming`: e.g. its old site). Never the whole mesh (`all`) unless it is the hub.
 */
export function overlayNodesAffected(opts: {
  changed: Node;
  hub: string | undefined;
  /** Every node's name. */
  all: () => readonly string[];
  /** The nodes of a site. */
  atSite: (site: string) => readonly Node[];
  /** The nodes whose Declaration names `node` as an overlay peer. */
  naming: (node: string) => readonly string[];
}): string[] {
  const { changed, hub } = opts;
  const name = changed.metadata.name ?? '';
  if (name === hub) return [...opts.all()];
  const site = changed.spec?.site;
  const siteNodes = site !== undefined ? opts.atSite(site).map((n) => n.metadata.name ?? '') : [];
  return [...new Set([name, ...(hub ? [hub] : []), ...siteNodes, ...opts.naming(name)])];
}

/**
 * Whether a Node's change can change other nodes' overlay resources: what a peer is rendered from (on the
 * overlay or not, site, endpoint, address, key). A heartbeat changes none of it, so it re-renders only the
 * node itself, not its site.
 */
export function overlayChanged(before: Node, after: Node): boolean {
  const view = (n: Node) => [
    onOverlay(n),
    n.spec?.site,
    n.spec?.endpoint,
    n.status?.overlay?.address,
    n.status?.overlay?.publicKey,
  ];
  const [a, b] = [view(before), view(after)];
  return a.some((v, i) => v !== b[i]);
}

/** The peer node names in a Declaration's overlay resource. */
export function overlayPeerNames(resources: readonly DeclaredResource[] | undefined): string[] {
  const r = resources?.find((x) => x.id === OVERLAY_RESOURCE_ID);
  if (r?.kind !== 'WireGuard') return [];
  return (r.spec.peers ?? []).map((p) => p.node ?? '').filter(Boolean);
}
