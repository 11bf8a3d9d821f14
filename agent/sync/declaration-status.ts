/**
 * What the agent writes to `Declaration.status` (pure): the generation it has stored (acknowledged: its
 * metadata.generation as observedGeneration, its spec.generation as receivedGeneration),
 * the generation it last applied in full, the per-resource results of its last reconcile of that
 * generation in declaration order (`Pending` before the first), and two conditions:
 *   - `Applied`: every resource of spec.generation has been applied (appliedGeneration = spec.generation);
 *   - `Ready`: the last reconcile found every resource in its declared state (drift included).
 * While the only resources not applied are Waiting (for a certificate not issued yet), both say reason `Waiting`.
 * Removal results are not part of it: they may repeat a declared id and are not declared resources.
 */
import { setCondition } from '../../api/meta/conditions.ts';
import type { Condition } from '../../api/meta/types.ts';
import type { Declaration, DeclarationStatus } from '../../api/v1alpha1/generated/declaration.ts';
import type { ResourceResult } from '../engine/types.ts';

/** The last reconcile of one declaration, as the status needs it. */
export interface RunSummary {
  uid?: string;
  /** metadata.generation of the declaration reconciled. */
  generation: number;
  results: readonly ResourceResult[];
  /** RFC 3339 time it finished. */
  at: string;
}

/** What `declarationStatus` reads. */
export interface StatusInput {
  decl: Declaration;
  /** The last reconcile; ignored unless it was of this declaration's generation. */
  run?: RunSummary;
  appliedGeneration?: number;
  /** The conditions written last (their lastTransitionTime is kept while their status holds). */
  previous?: readonly Condition[];
  now: string;
}

type ResultItem = NonNullable<DeclarationStatus['results']>[number];

const MAX_MESSAGE = 4096;
const STATES = new Set(['Applied', 'Failed', 'DependencyFailed', 'Conflict', 'Waiting']);

/** The results of a run as status items (declared resources only). */
export function statusResults(results: readonly ResourceResult[]): ResultItem[] {
  return results
    .filter((r) => r.action !== 'remove')
    .map((r) => {
      const state = (STATES.has(r.state) ? r.state : 'Failed') as ResultItem['state'];
      const message = r.message === undefined ? undefined : r.message.slice(0, MAX_MESSAGE);
      return { id: r.id, state, ...(message !== undefined ? { message } : {}) };
    });
}

function summary(items: readonly ResultItem[]): string {
  const bad = items.filter((i) => i.state !== 'Applied');
  const shown = bad
    .slice(0, 5)
    .map((i) => `${i.id} ${i.state}${i.message ? `: ${i.message}` : ''}`)
    .join('; ');
  return `${bad.length} of ${items.length} resources not applied: ${shown}${bad.length > 5 ? '; …' : ''}`.slice(
    0,
    MAX_MESSAGE,
  );
}

/** Computes the Declaration status (see the module comment). */
export function declarationStatus(input: StatusInput): DeclarationStatus {
  const { decl, now } = input;
  const generation = decl.metadata.generation ?? 0;
  const current =
    input.run !== undefined &&
    input.run.generation === generation &&
    (input.run.uid === undefined || input.run.uid === decl.metadata.uid);
  const results = current
    ? statusResults(input.run!.results)
    : decl.spec.resources.map((r) => ({ id: r.id, state: 'Pending' as const }));
  const allApplied = current && results.every((r) => r.state === 'Applied');
  // Only waiting for material from the control plane (a certificate not issued yet): not a failure.
  const waiting = current && !allApplied && results.every((r) => r.state === 'Applied' || r.state === 'Waiting');
  const applied = input.appliedGeneration !== undefined && input.appliedGeneration === decl.spec.generation;
  let conditions = [...(input.previous ?? [])];
  conditions = setCondition(
    conditions,
    applied
      ? { type: 'Applied', status: 'True', reason: 'Applied', message: `generation ${decl.spec.generation} applied` }
      : {
          type: 'Applied',
          status: 'False',
          reason: waiting ? 'Waiting' : current ? 'NotApplied' : 'Pending',
          message: current ? summary(results) : 'not yet applied',
        },
    now,
  );
  conditions = setCondition(
    conditions,
    allApplied
      ? {
          type: 'Ready',
          status: 'True',
          reason: 'AllApplied',
          message: `all ${results.length} resources are in their declared state`,
        }
      : {
          type: 'Ready',
          status: 'False',
          reason: waiting ? 'Waiting' : current ? 'ResourcesNotApplied' : 'Pending',
          message: current ? summary(results) : 'not yet reconciled',
        },
    now,
  );
  return {
    observedGeneration: generation,
    receivedGeneration: decl.spec.generation,
    ...(input.appliedGeneration !== undefined ? { appliedGeneration: input.appliedGeneration } : {}),
    results,
    conditions,
  };
}
