/**
 * The overlay controller: gives every Node an overlay address from Mesh.spec.overlay.cidr and records it
 * in Node.status.overlay.address (merge patch through /status: the agent writes the other overlay fields,
 * publicKey, interface, peers and message, and never this one). The store is the allocation's record: an
 * address stays with its node across control-plane restarts and is never given to another node while its
 * node exists. An address outside the current CIDR (the Mesh's range changed) is replaced.
 *
 * One worker, and the addresses it wrote remembered until the cache shows them: two nodes reconciled
 * back to back never get the same address from a cache that has not yet seen the first write.
 */
import type { Client } from '../api/client/types.ts';
import type { Logger } from '../api/meta/logger.ts';
import { realClock } from '../api/meta/clock.ts';
import { allocateAddress, inRange, parseIpv4Cidr } from '../api/v1alpha1/overlay-address.ts';
import { overlaySettings } from '../api/v1alpha1/overlay.ts';
import { createController, type Controller } from './runtime/controller.ts';
import { informersFor, type ControllerOptions, type Informers } from './runtime/manager.ts';
import { BY_OVERLAY_ADDRESS } from './cache-indexes.ts';
import { onMeshSpecChange } from './render-inputs.ts';

/** Options of createOverlayController. */
export type OverlayControllerOptions = ControllerOptions;

type Caches = Informers<'nodes' | 'meshes'>;

/** Creates the overlay controller; add it to the manager, which starts it once the caches are synced. */
export function createOverlayController(opts: OverlayControllerOptions): Controller {
  const { manager } = opts;
  const caches: Caches = informersFor(manager, ['nodes', 'meshes']);
  caches.nodes.addIndex(BY_OVERLAY_ADDRESS, (n) => (n.status?.overlay?.address ? [n.status.overlay.address] : []));
  const allocator = new AddressAllocator({ client: manager.client, caches, logger: manager.logger });
  return createController({
    name: 'overlay',
    reconciler: { reconcile: (key) => allocator.reconcile(key) },
    workers: 1,
    clock: opts.clock ?? realClock,
    logger: manager.logger,
    sources: [
      { informer: caches.nodes },
      // The overlay's CIDR is the Mesh's spec; its status (the recovery clock's, every minute) changes no address.
      {
        informer: caches.meshes,
        keys: onMeshSpecChange(() => caches.nodes.list().map((n) => n.metadata.name ?? '')),
      },
    ],
  });
}

/** Allocates and records one node's overlay address at a time. */
class AddressAllocator {
  private readonly client: Client;
  private readonly caches: Caches;
  private readonly logger: Logger;
  /** Addresses written by this process, by node, until the cache holds them. */
  private readonly written = new Map<string, string>();
  /** The address given out last: the next search starts after it (allocateAddress). */
  private lastAllocated: string | undefined;

  constructor(opts: { client: Client; caches: Caches; logger: Logger }) {
    this.client = opts.client;
    this.caches = opts.caches;
    this.logger = opts.logger;
  }

  async reconcile(name: string): Promise<void> {
    const node = this.caches.nodes.get(name);
    const { cidr } = overlaySettings(this.caches.meshes.list()[0]);
    const range = parseIpv4Cidr(cidr);
    if (!node || node.metadata.deletionTimestamp || !range) {
      this.written.delete(name);
      return;
    }
    const current = node.status?.overlay?.address;
    if (current && inRange(current, range)) {
      if (this.written.get(name) === current) this.written.delete(name);
      return;
    }
    const pending = this.written.get(name);
    if (pending && inRange(pending, range)) return;
    const address = allocateAddress(cidr, this.used(name), this.lastAllocated);
    if (!address) {
      this.logger.error('Failed to allocate overlay address', { node: name, cidr, reason: 'range full' });
      return;
    }
    await this.client.patch('nodes', name, { status: { overlay: { address } } }, { subresource: 'status' });
    this.written.set(name, address);
    this.lastAllocated = address;
    this.logger.info('Allocated overlay address', { node: name, address, cidr });
  }

  /**
   * The addresses held by another node, as cached or as just written: looked up in the address index, so
   * allocating for N new nodes does not list every node N times.
   */
  private used(except: string): Pick<ReadonlySet<string>, 'has'> {
    const written = new Set<string>();
    for (const [n, a] of this.written) if (n !== except && this.caches.nodes.get(n)) written.add(a);
    const cached = (a: string): boolean =>
      this.caches.nodes.byIndex(BY_OVERLAY_ADDRESS, a).some((n) => n.metadata.name !== except);
    return { has: (a) => written.has(a) || cached(a) };
  }
}
