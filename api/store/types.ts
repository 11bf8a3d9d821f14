/**
 * The contract of the control plane's store: what the API server relies on.
 * Objects are keyed by (plural, name); every kind is cluster-scoped.
 * Returned objects are shared and read-only: callers clone before changing them.
 */
import type { KubeObject, WatchEventType } from '../meta/types.ts';
import type { ObjectOf } from '../v1alpha1/generated/resources.ts';
import type { WatchSnapshot } from './watch-snapshots.ts';

export interface ListOptions {
  /** Kubernetes label selector: `a=b,c!=d,e,!f,g in (x,y),h notin (z)`. */
  labelSelector?: string;
  /** Field selector: `metadata.name=x`, `spec.node=y`, `status.phase!=z` (dotted paths, = == !=). */
  fieldSelector?: string;
}

export interface WriteOptions {
  /** Validate and compute the result without persisting it (`?dryRun=All`). */
  dryRun?: boolean;
}

/**
 * Options of a create or an update: what the caller checks. `admit` is called with the object exactly as it
 * would be stored — named (generateName resolved), status merged, server metadata stamped — before anything is
 * checked against the stored state (AlreadyExists, Conflict) or written; throwing rejects the write. The API
 * server passes its admission (schema validation, roles) here, so it validates what the store makes of a write.
 */
export interface CreateOptions extends WriteOptions {
  admit?: (obj: KubeObject) => void;
}

export interface UpdateOptions extends CreateOptions {
  /** `status`: only `.status` changes (plus nothing else); otherwise `.status` is kept from the stored object. */
  subresource?: 'status';
}

export interface DeleteOptions extends WriteOptions {
  /** Precondition: the object's current resourceVersion must equal this. */
  resourceVersion?: string;
  /** Precondition: the object's current uid must equal this. */
  uid?: string;
  /** `Orphan` leaves dependents (ownerReferences) alone; default is to delete them too. */
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
}

export interface WatchOptions extends ListOptions {
  /**
   * Where to start. Absent or '0': first an ADDED event for every current object, then changes.
   * Otherwise: every change after that resourceVersion; throws ApiError Expired (410) when it is older than the log,
   * or newer than any resourceVersion the store has issued (the client must relist).
   */
  resourceVersion?: string;
  /**
   * Leaves out the MODIFIED events of changes to nothing but `.status` (writes of the status subresource): for a
   * client that follows the spec and writes the status itself (the agent, of its Declaration), which has the result
   * of its own write in the answer to it. Changes seen through a selector as ADDED or DELETED are still delivered.
   */
  omitStatusUpdates?: boolean;
}

/**
 * A watch event as the store delivers it. Unlike a client's WatchEvent it is not narrowed by `type` (the
 * server only forwards it): for ERROR, `object` is the `Status`, a KubeObject too.
 */
export interface StoreWatchEvent {
  readonly type: WatchEventType;
  readonly object: KubeObject;
  /** The change's resourceVersion (0 for ERROR), when the store gives it without reading `object`. */
  readonly rv?: number;
}

/** A running watch; `stop()` is idempotent. */
export interface Watch {
  stop(): void;
  /**
   * Flow control (the durable store's watches have it): after `pause()` no event is delivered until `resume()`;
   * the events meanwhile wait in the store's shared event log, not per watch, and are delivered on resume — or,
   * if the log has dropped some of them by then, an ERROR event with a 410 Status ends the watch.
   */
  pause?(): void;
  resume?(): void;
}

/**
 * The store's API. Reads and writes are typed by the plural (`get('nodes', n)` is a `Node`, see ObjectOf in
 * api/v1alpha1/generated/resources.ts); a plural known only at run time (a `string`) gives a `KubeObject`.
 */
export interface Store {
  /** The newest resourceVersion the store has issued (as a decimal string). */
  resourceVersion(): string;
  /** One object, or undefined. */
  get<P extends string>(plural: P, name: string): ObjectOf<P> | undefined;
  /** The matching objects of a kind, sorted by name, with the store's resourceVersion at the time. */
  list<P extends string>(plural: P, opts?: ListOptions): { items: ObjectOf<P>[]; resourceVersion: string };
  /**
   * Creates an object: sets uid, resourceVersion, generation 1, creationTimestamp; ignores client-set values of those.
   * Without a name, names it `metadata.generateName` plus 5 random characters of Kubernetes' alphabet.
   * Throws Invalid (no name), AlreadyExists. Resolves once the write is durable (fsync'd).
   */
  create<P extends string>(plural: P, obj: ObjectOf<P>, opts?: CreateOptions): Promise<ObjectOf<P>>;
  /**
   * Replaces an object. If obj.metadata.resourceVersion is set and differs from the stored one: Conflict.
   * Status separation: the main resource keeps the stored `.status`; `subresource: 'status'` changes only `.status`.
   * generation is bumped only when the spec (anything but metadata and status) changed.
   * When deletionTimestamp is set and finalizers become empty, the object is deleted.
   * Throws NotFound. Resolves once durable.
   */
  update<P extends string>(plural: P, obj: ObjectOf<P>, opts?: UpdateOptions): Promise<ObjectOf<P>>;
  /**
   * Deletes an object, or marks it (deletionTimestamp) when it has finalizers.
   * Cascades to objects whose ownerReferences name its uid, unless Orphan.
   * Resolves with the object as it was deleted (or as marked). Throws NotFound / Conflict (preconditions).
   */
  delete(plural: string, name: string, opts?: DeleteOptions): Promise<KubeObject>;
  /**
   * Streams events for one kind, in resourceVersion order, only after they are durable.
   * Throws ApiError with code 410 when opts.resourceVersion is older than the in-memory event log.
   */
  watch(plural: string, opts: WatchOptions, onEvent: (e: StoreWatchEvent) => void): Watch;
  /**
   * Optional (the durable store has it; views that filter what a caller sees do not): the ADDED events an
   * unfiltered watch from resourceVersion 0 starts with, as wire bytes shared by every such watch, at a durable
   * resourceVersion from which the caller then watches (watch-snapshots.ts).
   */
  watchSnapshot?(plural: string): Promise<WatchSnapshot>;
  /** Flushes pending writes and closes the files. */
  close(): Promise<void>;
}
