/**
 * The shapes the host-applying engine and its drivers share: drivers, observations, plan steps,
 * inventory entries and per-resource results. Declared resources and their specs are not here: they
 * are the types generated from the schemas (`DeclaredResource`, `DirectorySpec`, `FileSpec`,
 * `ServiceSpec`, … in api/v1alpha1/generated/), which admission validates against.
 */
import type { Clock } from '../../api/meta/clock.ts';
import type { ResourceResult as StatusResult } from '../../api/v1alpha1/generated/declaration.ts';
import type { HostResourceId, HostResourceKind, HostResourceSpec } from '../../api/v1alpha1/generated/host-resource.ts';
import type { Logger } from '../../api/meta/logger.ts';

/** The structured logger every process shares. */
export type { Logger, LogFields } from '../../api/meta/logger.ts';

/** What every driver call receives: where the host lives and where the agent keeps its own files. */
export interface DriverContext {
  /** Every declared path resolves under this directory (default `/`). */
  root: string;
  /** The agent's own directory (logs, pid files). */
  stateDir: string;
  logger: Logger;
  clock?: Clock;
}

/** A driver context for one resource: the resource's id and owner are known. */
export interface ResourceContext extends DriverContext {
  id: string;
  owner: string;
}

/**
 * What a driver saw in the world for one resource. `exists` says whether anything is there at all;
 * `error` says it could not be observed. Everything else is driver-specific and JSON-serialisable
 * (the engine keeps the last observation in the inventory for fast no-op checks).
 */
export interface Observed {
  exists: boolean;
  error?: string;
  /** With `error`: the error was a WaitingError (an input from outside the agent is not there yet). */
  waiting?: boolean;
  [fact: string]: unknown;
}

/**
 * Thrown by a driver when the resource cannot reach its declared state until something from outside the agent
 * arrives — the certificate a File's `contentFrom` names, not issued yet (Kubernetes: a container Waiting for
 * the Secret it mounts). Not a failure: the engine reports it `Waiting`, logs it at info, and tries again at
 * the next reconcile (the agent reconciles when the material arrives) without backing off.
 */
export class WaitingError extends Error {
  override readonly name = 'WaitingError';
}

/** One difference between the declared spec and the world. */
export interface Change {
  field: string;
  message: string;
}

/** What `remove` reports when it deliberately left something in place (e.g. a non-empty directory). */
export interface RemoveOutcome {
  retained: true;
  message: string;
}

/**
 * A host resource kind's driver (Puppet's type/provider): observe the world, diff purely, apply, remove.
 * Drivers never retry; the engine does.
 */
export interface Driver<S = unknown, O extends Observed = Observed> {
  readonly kind: HostResourceKind;
  /** The resource's identity in the world (e.g. `path:/etc/x`); two declared resources may not share one. */
  key(spec: S, id: string): string;
  /** Reads the world. `last` is the observation recorded after the last apply (for fast paths). */
  observe(spec: S, ctx: ResourceContext, last?: O): Promise<O>;
  /** Pure: what differs between `spec` and `observed`; `[]` when in sync. */
  diff(spec: S, observed: O): Change[];
  /** Makes the world match `spec`. */
  apply(spec: S, ctx: ResourceContext, observed: O): Promise<void>;
  /** Removes what `apply` created; idempotent (absent is fine). */
  remove(spec: S, ctx: ResourceContext): Promise<RemoveOutcome | void>;
  /** Whether an existing object missing from the inventory was nevertheless made by this agent. */
  owns?(spec: S, observed: O): boolean;
}

/** The drivers the engine may use, by kind (an explicit map; nothing registers itself). */
export type DriverRegistry = Partial<Record<HostResourceKind, Driver>>;

/** One resource the agent created and owns, as last applied. Inventory order is creation order. */
export interface InventoryEntry {
  id: string;
  kind: HostResourceKind;
  owner: string;
  spec: HostResourceSpec;
  /** RFC 3339 time of the last successful apply (or of the intent, while `pending`). */
  appliedAt: string;
  /** The observation right after the last successful apply. */
  observed?: Observed;
  /** Recorded before a create: the agent may have created it, so it is owned, but it is unconfirmed. */
  pending?: boolean;
  /** Earlier specs of this id at another world key (e.g. the file moved): still to be removed. */
  superseded?: HostResourceSpec[];
}

/** What the plan does with one resource. */
export type StepAction = 'create' | 'update' | 'noop' | 'remove' | 'conflict';

/** One step of a plan (the plan also serves dry-run). */
export interface Step {
  action: StepAction;
  id: string;
  kind: HostResourceKind;
  owner: string;
  /** Declared steps: the ids it waits for (its `dependsOn`); it is skipped when one of them does not apply. */
  dependsOn?: HostResourceId[];
  changes?: Change[];
  /** Why (conflicts), or why it will fail (not observable, no driver). */
  message?: string;
  /** create/update: the inventory id of the same world object under an old id (ownership moves here). */
  replaces?: string;
  /** remove: the spec as applied, i.e. what to remove. */
  spec?: HostResourceSpec;
  /** remove: `spec` is an earlier spec of a still-declared id that moved to another path. */
  superseded?: boolean;
  /** Applying must fail with this message without calling the driver. */
  error?: string;
  /** With `error`: the resource is Waiting for its input (a WaitingError), not failed. */
  waiting?: boolean;
}

/**
 * The outcome for one resource: a state of the Declaration status (but `Pending`), or one of a removal.
 * `Retained`: removal left it in place on purpose (it stays owned).
 */
export type ResultState = Exclude<StatusResult['state'], 'Pending'> | 'Removed' | 'Retained';

/** The per-resource result of applying a plan. */
export interface ResourceResult {
  id: string;
  kind: HostResourceKind;
  owner: string;
  action: StepAction;
  state: ResultState;
  message?: string;
}
