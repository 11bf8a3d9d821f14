/**
 * The recovery clock (ADR 0053): the recovery deadline and what sets it, the outage budget counting down to the
 * second, and the last verified backup's age — as a description list.
 */
import type { Mesh } from '../../api/v1alpha1/generated/index.ts';
import { h } from '../shared/dom.ts';
import { ago, countdown, dateTime } from './format.ts';

/** The section's content at `now`, from the Mesh and the deadline (api/v1alpha1/recovery-deadline.ts). */
export function clockSection(
  mesh: Mesh | undefined,
  d: { deadline?: string; setBy: string },
  now: number,
): HTMLElement {
  const budget = d.deadline ? Date.parse(d.deadline) - now : undefined;
  const backup = mesh?.status?.lastVerifiedBackup;
  const pair = (term: string, ...desc: (string | Node)[]): HTMLElement[] => [h('dt', {}, term), h('dd', {}, ...desc)];
  return h(
    'dl',
    { class: 'facts' },
    ...pair('Recovery deadline', d.deadline ? `${dateTime(d.deadline)}, set by ${d.setBy}` : `none (${d.setBy})`),
    ...pair(
      'Outage budget',
      budget === undefined
        ? 'unbounded (nothing expires)'
        : h('span', { id: 'budget', class: budget <= 0 ? 'state bad' : 'countdown' }, countdown(budget)),
    ),
    ...pair(
      'Last verified backup',
      backup
        ? `${backup.name}, taken ${ago(now, backup.time)} (${dateTime(backup.time)})`
        : 'none — recovery is restore, so take one',
    ),
    ...pair('Control plane node', mesh?.status?.controlPlaneNode ?? 'not declared'),
    ...pair('Overlay hub', mesh?.status?.hubNode ?? 'not declared'),
  );
}
