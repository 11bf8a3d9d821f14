/**
 * An Assignment's status as its node reports it: pure functions from the rendering outcome and the
 * Declaration's status (written by the node's agent) to the Assignment's `status` and `Applied` condition.
 *
 * Applied is True once the agent has stored a Declaration generation at least as new as the one since which
 * this assignment's resources are unchanged (status.receivedGeneration ≥ the owner record's generation, both
 * spec.generations; an agent that does not report it is read by its observedGeneration) and
 * reports every one of those resources Applied. Otherwise it is False with the reason: NodeNotFound,
 * ModuleNotFound, VersionNotAvailable, InvalidResourceId (nothing rendered), Failed or Conflict (a resource
 * did not apply: the message names it and the agent's error), Waiting (a resource waits for material from the
 * control plane, e.g. its certificate is not issued yet), or Pending (the node has not got there yet).
 * This reads status.results as describing status.observedGeneration, so the agent writes both together.
 *
 * Every version or generation a message names is backed by the node's report: the rendered resources carry
 * the module version (render-declaration.ts), so a new version is a new owner generation, and "applied … of
 * version X" needs the node to have stored that generation and reported its resources Applied.
 */
import { jsonEqual } from '../api/meta/json-equal.ts';
import { setCondition } from '../api/meta/conditions.ts';
import type { Assignment, AssignmentStatus, Declaration, ResourceResult } from '../api/v1alpha1/generated/index.ts';
import type { OwnerOutcome } from '../api/v1alpha1/render-declaration.ts';

/** The condition type this controller owns on Assignments. */
export const APPLIED = 'Applied';

/** The Applied condition's status, reason and message (without timestamps). */
export interface AppliedVerdict {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

/** What assignmentStatus needs to know about one assignment of a node. */
export interface AssignmentStatusInput {
  assignment: Assignment;
  /** The assignment's rendering outcome; undefined when its Node does not exist. */
  outcome?: OwnerOutcome;
  /** The node's Declaration as stored (with the agent's status). */
  declaration?: Declaration;
  /** The current time (RFC 3339), used as lastTransitionTime when Applied flips. */
  now: string;
}

const NOT_APPLIED: ReadonlySet<ResourceResult['state']> = new Set(['Failed', 'DependencyFailed', 'Conflict']);

/** Decides the Applied condition of an assignment (see the module comment). */
export function appliedVerdict(input: Omit<AssignmentStatusInput, 'now'>): AppliedVerdict {
  const { assignment, outcome, declaration } = input;
  const node = assignment.spec.node;
  if (!outcome) return { status: 'False', reason: 'NodeNotFound', message: `node "${node}" not found` };
  if (outcome.problem) return { status: 'False', ...outcome.problem };
  const rendered = outcome.rendered!;
  const observed = declaration?.status?.receivedGeneration ?? declaration?.status?.observedGeneration;
  if (observed === undefined || observed < rendered.generation) {
    const holds = observed === undefined ? '' : ` (it holds generation ${observed})`;
    return {
      status: 'False',
      reason: 'Pending',
      message: `node "${node}" has not yet stored declaration generation ${rendered.generation}${holds}`,
    };
  }
  const results = new Map((declaration?.status?.results ?? []).map((r) => [r.id, r]));
  const failed = rendered.ids.map((id) => results.get(id)).find((r) => r !== undefined && NOT_APPLIED.has(r.state));
  if (failed) {
    const why = failed.message ? `: ${failed.message}` : '';
    return {
      status: 'False',
      reason: failed.state === 'Conflict' ? 'Conflict' : 'Failed',
      message: `resource "${failed.id}" is ${failed.state} on node "${node}"${why}`,
    };
  }
  const applied = rendered.ids.filter((id) => results.get(id)?.state === 'Applied').length;
  const waiting = rendered.ids.map((id) => results.get(id)).find((r) => r?.state === 'Waiting');
  if (waiting) {
    return {
      status: 'False',
      reason: 'Waiting',
      message: `resource "${waiting.id}" is Waiting on node "${node}"${waiting.message ? `: ${waiting.message}` : ''}`,
    };
  }
  if (applied < rendered.ids.length) {
    return {
      status: 'False',
      reason: 'Pending',
      message: `node "${node}" has applied ${applied} of ${rendered.ids.length} resources`,
    };
  }
  return {
    status: 'True',
    reason: 'Applied',
    message: `node "${node}" applied all ${applied} resources of version ${rendered.version}`,
  };
}

/** The status the assignment should have: observedGeneration, the rendered version, and the Applied condition. */
export function assignmentStatus(input: AssignmentStatusInput): AssignmentStatus {
  const { assignment } = input;
  const generation = assignment.metadata.generation ?? 0;
  const verdict = appliedVerdict(input);
  const conditions = setCondition(
    assignment.status?.conditions ?? [],
    { type: APPLIED, ...verdict, observedGeneration: generation },
    input.now,
  );
  const version = input.outcome?.rendered?.version;
  return { observedGeneration: generation, ...(version !== undefined ? { version } : {}), conditions };
}

/** True when the assignment's stored status differs from `status` (so it must be written). */
export function statusDiffers(assignment: Assignment, status: AssignmentStatus): boolean {
  return !jsonEqual(assignment.status ?? {}, status);
}
