/**
 * Status conditions, the Kubernetes way: at most one condition per `type`, and `lastTransitionTime` moves
 * only when the condition's `status` flips (a new reason or message alone is not a transition). Every
 * controller and the agent use these, so conditions read the same on every kind.
 */
import type { Condition } from './types.ts';

/** The condition of `type` in a list (a status's `conditions`, possibly absent), or undefined. */
export function findCondition<C extends { type: string }>(
  conditions: readonly C[] | undefined,
  type: string,
): C | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * `conditions` with the one of `next.type` set to `next`, in place (appended when new); its lastTransitionTime
 * is kept when its status did not change, `now` otherwise. The input list is not modified.
 */
export function setCondition(
  conditions: readonly Condition[],
  next: Omit<Condition, 'lastTransitionTime'>,
  now: string,
): Condition[] {
  const prev = findCondition(conditions, next.type);
  const cond: Condition = {
    ...next,
    lastTransitionTime: prev && prev.status === next.status ? prev.lastTransitionTime : now,
  };
  return prev ? conditions.map((c) => (c === prev ? cond : c)) : [...conditions, cond];
}
