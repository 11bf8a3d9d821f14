/**
 * What the registry knows about a kind: its names, its printed columns and its schema.
 */
import { evalJsonPath } from './json-path.ts';

/** One printed column, like a CRD's additionalPrinterColumns. */
export interface PrintColumn {
  /** Header, upper-cased when printed (e.g. `Reachable`). */
  name: string;
  /** JSONPath-ish dotted path into the object, e.g. `.spec.node` or `.status.conditions[?(@.type=="Ready")].status`. */
  jsonPath: string;
  type: 'string' | 'integer' | 'number' | 'boolean' | 'date';
  /** Shown only with `-o wide` when > 0. */
  priority?: number;
  description?: string;
}

export interface KindInfo {
  /** e.g. `Node` */
  kind: string;
  /** e.g. `nodes` */
  plural: string;
  /** e.g. `node` */
  singular: string;
  shortNames: string[];
  /** Columns after NAME; AGE is appended by printers. */
  columns: PrintColumn[];
  /** Whether the kind has a status subresource. */
  hasStatus: boolean;
  /** Singleton kinds accept only this name (e.g. Mesh → `mesh`). */
  singletonName?: string;
  /**
   * Where AGE is computed from, the first field set (default: `.metadata.creationTimestamp`). An Event's AGE is
   * when it last happened, not when it reached the server: an agent delivers what happened during an outage later.
   */
  ageFrom?: string[];
}

/** The timestamp an object's AGE counts from (see KindInfo.ageFrom). */
export function ageTimestamp(
  info: Pick<KindInfo, 'ageFrom'>,
  obj: { metadata?: { creationTimestamp?: string } },
): string | undefined {
  for (const path of info.ageFrom ?? []) {
    const v = evalJsonPath(obj, path);
    if (typeof v === 'string' && v !== '') return v;
  }
  return obj.metadata?.creationTimestamp;
}
