/**
 * NodeRestriction, the admission half of the node rules (node-authorizer.ts decides on verb and resource
 * before the body is read; this checks what a node writes): an Event a node creates must be about its own
 * Node, its own Declaration, or an Assignment to it. It is a view of the store that a node's requests use,
 * so every write path (create, dry run) goes through it. With an EventQuota (event-quota.ts) it also holds a
 * node to its event rate and count. A node's writes of its Node keep the stored `status.overlay.address`:
 * the control plane allocates it (controllers/overlay-controller.ts), and a node must not claim another's.
 * With NodeLeases (node-leases.ts), a node's heartbeat (a status write changing only its contact time) is
 * recorded there and reaches the store only when due for persisting.
 */
import { ApiError } from '../../meta/api-error.ts';
import type { KubeObject } from '../../meta/types.ts';
import type { ObjectOf } from '../../v1alpha1/generated/resources.ts';
import type {
  CreateOptions,
  DeleteOptions,
  ListOptions,
  Store,
  StoreWatchEvent,
  UpdateOptions,
  Watch,
  WatchOptions,
} from '../../store/types.ts';
import { forbidden, type Identity } from './auth.ts';
import type { EventQuota } from './event-quota.ts';
import type { NodeLeases } from './node-leases.ts';

/** The store as a request of `identity` sees it: the store itself for the admin, a NodeRestriction view for a node. */
export function storeFor(identity: Identity, store: Store, quota?: EventQuota, leases?: NodeLeases): Store {
  return identity.kind === 'node' ? nodeRestrictedStore(store, identity.name, quota, leases) : store;
}

/**
 * A view of `store` for node `self`: creating an Event about anything but itself is a 403; `quota` bounds its
 * events; `leases` takes its heartbeats (a dry run always goes to the store).
 */
export function nodeRestrictedStore(store: Store, self: string, quota?: EventQuota, leases?: NodeLeases): Store {
  return new NodeRestrictedStore(store, self, quota, leases);
}

/**
 * The view nodeRestrictedStore returns, a class so that building one per request (a heartbeat a second per
 * node) allocates one small object rather than a closure per method.
 */
class NodeRestrictedStore implements Store {
  constructor(
    private readonly store: Store,
    private readonly self: string,
    private readonly quota: EventQuota | undefined,
    private readonly leases: NodeLeases | undefined,
  ) {}

  resourceVersion(): string {
    return this.store.resourceVersion();
  }
  get<P extends string>(plural: P, name: string): ObjectOf<P> | undefined {
    return this.store.get(plural, name);
  }
  list<P extends string>(plural: P, opts?: ListOptions): { items: ObjectOf<P>[]; resourceVersion: string } {
    return this.store.list(plural, opts);
  }
  async create<P extends string>(plural: P, obj: ObjectOf<P>, opts?: CreateOptions): Promise<ObjectOf<P>> {
    const { store, self, quota } = this;
    if (plural !== 'events') return store.create(plural, obj, opts);
    checkEvent(store, self, obj);
    if (!quota) return store.create(plural, obj, opts);
    quota.take(self);
    const created = await store.create(plural, quota.label(obj, self), opts);
    if (!opts?.dryRun) await quota.collect(store, self);
    return created;
  }
  update<P extends string>(plural: P, obj: ObjectOf<P>, opts?: UpdateOptions): Promise<ObjectOf<P>> {
    const { store, self, leases } = this;
    if (plural !== 'nodes') return store.update(plural, obj, opts);
    const kept = keepOverlayAddress(store, obj);
    if (!leases || opts?.subresource !== 'status' || opts.dryRun || kept.metadata?.name !== self)
      return store.update(plural, kept, opts);
    return leases.update(store, kept, (o) => store.update(plural, o, opts));
  }
  delete(plural: string, name: string, opts?: DeleteOptions): Promise<KubeObject> {
    return this.store.delete(plural, name, opts);
  }
  watch(plural: string, opts: WatchOptions, onEvent: (e: StoreWatchEvent) => void): Watch {
    return this.store.watch(plural, opts, onEvent);
  }
  close(): Promise<void> {
    return Promise.reject(new ApiError({ reason: 'InternalError', message: 'a request cannot close the store' }));
  }
}

/** Throws 403 unless the Event is about node `self`'s own objects. */
export function checkEvent(store: Store, self: string, event: KubeObject): void {
  // Ownership and finalizers are not a node's to set: an ownerReference chain would let it shape what an
  // admin's delete cascades through.
  const meta = event.metadata ?? {};
  if ((meta.ownerReferences?.length ?? 0) > 0 || (meta.finalizers?.length ?? 0) > 0) {
    throw forbidden(
      { kind: 'node', name: self },
      { verb: 'create', plural: 'events', path: '' },
      'a node may not set ownerReferences or finalizers on the events it creates',
    );
  }
  const about = (event.involvedObject ?? {}) as { kind?: unknown; name?: unknown };
  const kind = typeof about.kind === 'string' ? about.kind : '';
  const name = typeof about.name === 'string' ? about.name : '';
  const own =
    ((kind === 'Node' || kind === 'Declaration') && name === self) ||
    (kind === 'Assignment' && (store.get('assignments', name)?.spec as { node?: unknown } | undefined)?.node === self);
  if (own) return;
  const attrs = { verb: 'create' as const, plural: 'events', path: '' };
  const what = kind ? `${kind} "${name}"` : 'an object it does not name';
  throw forbidden(
    { kind: 'node', name: self },
    attrs,
    `an Event from a node must be about its own Node or Declaration ("${self}") or an Assignment to it, not about ${what}`,
  );
}

/** `obj` with the stored Node's `status.overlay.address` (or none, when the stored Node has none). */
export function keepOverlayAddress<T extends KubeObject>(store: Store, obj: T): T {
  type Overlay = Record<string, unknown> & { address?: unknown };
  const overlayOf = (o: KubeObject | undefined): Overlay | undefined => {
    const status = o?.status;
    if (typeof status !== 'object' || status === null) return undefined;
    const overlay = (status as { overlay?: unknown }).overlay;
    return typeof overlay === 'object' && overlay !== null ? (overlay as Overlay) : undefined;
  };
  const stored = overlayOf(store.get('nodes', obj.metadata?.name ?? ''))?.address;
  const sent = overlayOf(obj);
  if (sent?.address === stored) return obj;
  const { address: _dropped, ...rest } = sent ?? {};
  const overlay = stored === undefined ? rest : { ...rest, address: stored };
  return { ...obj, status: { ...(obj.status as Record<string, unknown>), overlay } };
}
