/**
 * The Events the Assignment controller records, so that `meshctl describe assignment X` shows what happened
 * to it: one when its Applied condition changes status or reason (it became Applied, Pending, Failed, …),
 * with the condition's message, at the controller's time. Pure: the controller creates what this returns,
 * after the status write that made the change.
 */
import { findCondition } from '../api/meta/conditions.ts';
import { API_VERSION } from '../api/meta/types.ts';
import type { Assignment, AssignmentStatus, Event as MeshEvent } from '../api/v1alpha1/generated/index.ts';
import { APPLIED } from './assignment-status.ts';

/** The reasons of an Applied=False that are a step on the way, not a problem: a Normal event, not a Warning. */
const NORMAL_REASONS: ReadonlySet<string> = new Set(['Pending']);

/** The Event about the change from `assignment`'s stored status to `next`, or undefined when Applied kept its status and reason. */
export function appliedEvent(assignment: Assignment, next: AssignmentStatus, now: string): MeshEvent | undefined {
  const before = findCondition(assignment.status?.conditions, APPLIED);
  const after = findCondition(next.conditions, APPLIED);
  if (!after || (before?.status === after.status && before.reason === after.reason)) return undefined;
  const name = assignment.metadata.name ?? '';
  return {
    apiVersion: API_VERSION,
    kind: 'Event',
    metadata: { generateName: `${name}.` },
    involvedObject: {
      apiVersion: API_VERSION,
      kind: 'Assignment',
      name,
      ...(assignment.metadata.uid ? { uid: assignment.metadata.uid } : {}),
    },
    type: after.status === 'True' || NORMAL_REASONS.has(after.reason) ? 'Normal' : 'Warning',
    reason: after.reason,
    message: after.message ?? '',
    count: 1,
    firstTimestamp: now,
    lastTimestamp: now,
    source: { component: 'assignment-controller' },
  };
}
