/**
 * The shapes the host-applying engine and its drivers share: declared resources, drivers, observations,
 * plan steps, inventory entries and per-resource results. Structurally compatible with the
 * `Declaration` schema's `spec.resources` items (the lead swaps in the generated types later).
 */

/** The host resource kinds a declaration may hold. */
export type ResourceKind = 'Directory' | 'File' | 'Service' | 'WireGuard';

/** One entry of a declaration's ordered `spec.resources`: a host resource owned by an assignment. */
export interface Resource {
  id: string;
  owner: string;
  kind: ResourceKind;
  spec: object;
}

/** A file mode: a number (`0o644`) or an octal string (`"0644"`, `"644"`). */
export type FileMode = number | string;

/** Spec of a `Directory`: created with `mkdir -p`, removed only when empty. */
export interface DirectorySpec {
  path: string;
  mode?: FileMode;
}

/** Where a `File`'s content comes from when not inline (e.g. certificate material); resolved by the agent. */
export type ContentSource = Record<string, unknown>;

/** Spec of a `File`: utf8 content and mode, replaced atomically. */
export interface FileSpec {
  path: string;
  content?: string;
  contentFrom?: ContentSource;
  mode?: FileMode;
}

/** When a supervised service is started again after it exited. */
export type RestartPolicy = 'always' | 'on-failure' | 'never';

/** Spec of a `Service`: a long-running process, supervised by the agent or by systemd. */
export interface ServiceSpec {
  driver: 'process' | 'systemd';
  command: string[];
  env?: Record<string, string>;
  workingDirectory?: string;
  restart?: RestartPolicy;
}

import type { Clock } from '../../api/meta/clock.ts';
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
  [fact: string]: unknown;
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
  readonly kind: ResourceKind;
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
export type DriverRegistry = Partial<Record<ResourceKind, Driver>>;

/** One resource the agent created and owns, as last applied. Inventory order is creation order. */
export interface InventoryEntry {
  id: string;
  kind: ResourceKind;
  owner: string;
  spec: object;
  /** RFC 3339 time of the last successful apply (or of the intent, while `pending`). */
  appliedAt: string;
  /** The observation right after the last successful apply. */
  observed?: Observed;
  /** Recorded before a create: the agent may have created it, so it is owned, but it is unconfirmed. */
  pending?: boolean;
  /** Earlier specs of this id at another world key (e.g. the file moved): still to be removed. */
  superseded?: object[];
}

/** What the plan does with one resource. */
export type StepAction = 'create' | 'update' | 'noop' | 'remove' | 'conflict';

/** One step of a plan (the plan also serves dry-run). */
export interface Step {
  action: StepAction;
  id: string;
  kind: ResourceKind;
  owner: string;
  changes?: Change[];
  /** Why (conflicts), or why it will fail (not observable, no driver). */
  message?: string;
  /** create/update: the inventory id of the same world object under an old id (ownership moves here). */
  replaces?: string;
  /** remove: the spec as applied, i.e. what to remove. */
  spec?: object;
  /** remove: `spec` is an earlier spec of a still-declared id that moved to another path. */
  superseded?: boolean;
  /** Applying must fail with this message without calling the driver. */
  error?: string;
}

/** The outcome for one resource. `Retained`: removal left it in place on purpose (it stays owned). */
export type ResultState = 'Applied' | 'Failed' | 'DependencyFailed' | 'Conflict' | 'Removed' | 'Retained';

/** The per-resource result of applying a plan. */
export interface ResourceResult {
  id: string;
  kind: ResourceKind;
  owner: string;
  action: StepAction;
  state: ResultState;
  message?: string;
}
