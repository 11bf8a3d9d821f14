/**
 * The Kubernetes object shapes every kind shares: metadata, conditions, lists and watch events.
 * Metadata and conditions are the upstream `V1ObjectMeta` and `V1Condition` types (types only).
 */
import type { V1ObjectMeta, V1Condition, V1OwnerReference } from '@kubernetes/client-node';
import type { Status } from './api-error.ts';

/** The API group and version every meshctl kind is served under. */
export const GROUP = 'meshctl.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/** Object metadata as stored and served (timestamps are RFC 3339 strings on the wire). */
export type ObjectMeta = Omit<V1ObjectMeta, 'creationTimestamp' | 'deletionTimestamp' | 'managedFields'> & {
  creationTimestamp?: string;
  deletionTimestamp?: string;
};

export type OwnerReference = V1OwnerReference;

/** A status condition (`lastTransitionTime` is an RFC 3339 string on the wire). */
export type Condition = Omit<V1Condition, 'lastTransitionTime'> & { lastTransitionTime: string };

/** Any object of any kind, as the store and the server handle it. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec?: unknown;
  status?: unknown;
  [field: string]: unknown;
}

/** A list response (`<Kind>List`). */
export interface ObjectList<T extends KubeObject = KubeObject> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** A column of a Table: its name, type (`string`, `integer`, `date`, …) and priority (above 0: only in wide output). */
export interface TableColumnDefinition {
  name: string;
  type: string;
  format: string;
  description: string;
  priority: number;
}

/** One row of a Table: a cell per column (null when the value is absent) and, when asked for, the object (or its metadata). */
export interface TableRow {
  cells: Array<string | number | boolean | null>;
  object?: { apiVersion?: string; kind?: string; metadata?: KubeObject['metadata'] };
}

/** A `meta.k8s.io/v1` Table: a list printed by the server (NAME, the kind's print columns, AGE), as kubectl asks. */
export interface Table {
  apiVersion: string;
  kind: 'Table';
  metadata: ObjectList['metadata'];
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

/**
 * One line of a `?watch=1` stream, narrowed by `type`: a change of a `T`; a BOOKMARK, whose object carries
 * only `metadata.resourceVersion`; or an ERROR, whose object is the `Status` (e.g. 410 Expired: relist).
 */
export type WatchEvent<T extends KubeObject = KubeObject> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  | { type: 'BOOKMARK'; object: KubeObject }
  | { type: 'ERROR'; object: Status };

/** A watch event that carries a changed object: ADDED, MODIFIED or DELETED (not a BOOKMARK or an ERROR). */
export type ObjectEvent<T extends KubeObject = KubeObject> = Extract<
  WatchEvent<T>,
  { type: 'ADDED' | 'MODIFIED' | 'DELETED' }
>;
