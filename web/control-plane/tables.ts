/**
 * The page's tables, each a pure function of the live data and `now`: ADR 0053's table of what is stopped, the
 * nodes, the assignments, the certificates nearest to expiry and the recent Warning events. Every table has a
 * caption and header cells with scope; every state is a word (the colour only repeats it).
 */
import { findCondition } from '../../api/meta/conditions.ts';
import type { Assignment, Certificate, Event, Node } from '../../api/v1alpha1/generated/index.ts';
import type { WhatStopsRow } from '../../api/v1alpha1/what-stops.ts';
import { h, type Child } from '../shared/dom.ts';
import { ago, clockTime, countdown, dateTime } from './format.ts';

/** A table: caption, column headers, rows whose first cell is the row's header; `empty` when there are none. */
function table(caption: string, headers: string[], rows: Child[][], empty: string): HTMLElement {
  if (rows.length === 0) return h('p', { class: 'empty' }, empty);
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...headers.map((t) => h('th', { scope: 'col' }, t)))),
    h(
      'tbody',
      {},
      rows.map(([first, ...rest]) => h('tr', {}, h('th', { scope: 'row' }, first), ...rest.map((c) => h('td', {}, c)))),
    ),
  );
}

/** A state word, styled by its kind (the word says it; the colour repeats it). */
function state(kind: 'ok' | 'bad' | 'unknown', text: string): HTMLElement {
  return h('span', { class: `state ${kind}` }, text);
}

/** A time shown as clock time, with the full time in `datetime` and the title. */
function at(iso: string): HTMLElement {
  return h('time', { datetime: iso, title: dateTime(iso) }, clockTime(Date.parse(iso)));
}

/** ADR 0053's rows with their live state. */
export function stopsTable(rows: WhatStopsRow[]): HTMLElement {
  const cell = (r: WhatStopsRow): Child[] =>
    r.stopped
      ? [state('bad', 'Stopped'), `: ${r.why}`, ...(r.since ? [' since ', at(r.since)] : [])]
      : [state('ok', 'Works')];
  return table(
    'What keeps working while the control plane or the hub is down (ADR 0053), right now',
    ['What', 'State now'],
    rows.map((r) => [r.what, h('span', {}, ...cell(r))]),
    'No rows.',
  );
}

/** The nodes: reachability and since when, last contact, declaration generations, site. */
export function nodesTable(nodes: Node[], now: number): HTMLElement {
  const reach = (n: Node): Child => {
    const s = n.status;
    if (s?.reachable === undefined) return state('unknown', 'Unknown');
    const since: Child[] = s.since ? [' since ', at(s.since)] : [];
    return h('span', {}, s.reachable ? state('ok', 'Reachable') : state('bad', 'Unreachable'), ...since);
  };
  const decl = (n: Node): string => {
    const d = n.status?.declaration;
    if (d?.desiredGeneration === undefined) return 'none';
    const applied = d.appliedGeneration ?? 'none';
    return d.appliedGeneration === d.desiredGeneration
      ? `${applied} of ${d.desiredGeneration} (up to date)`
      : `${applied} of ${d.desiredGeneration} (behind)`;
  };
  const rows = [...nodes]
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))
    .map((n) => [n.metadata.name, reach(n), ago(now, n.status?.lastSeen), decl(n), n.spec?.site ?? '—']);
  return table(
    `Nodes (${nodes.length})`,
    ['Node', 'Reachability', 'Last contact', 'Declaration applied of desired', 'Site'],
    rows,
    'No nodes have joined yet.',
  );
}

/** The assignments and their Applied condition. */
export function assignmentsTable(assignments: Assignment[]): HTMLElement {
  const applied = (a: Assignment): Child => {
    const c = findCondition(a.status?.conditions, 'Applied');
    if (!c) return state('unknown', 'Not reported');
    const kind = c.status === 'True' ? 'ok' : c.status === 'False' ? 'bad' : 'unknown';
    const word = c.status === 'True' ? 'Applied' : c.status === 'False' ? 'Not applied' : 'Unknown';
    return h(
      'span',
      {},
      state(kind, word),
      c.reason && c.reason !== word ? ` (${c.reason})` : '',
      c.message ? `: ${c.message}` : '',
    );
  };
  const rows = [...assignments]
    .sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))
    .map((a) => [a.metadata.name, a.spec.module, a.spec.node, a.status?.version ?? a.spec.version ?? '—', applied(a)]);
  return table(
    `Assignments (${assignments.length})`,
    ['Assignment', 'Module', 'Node', 'Version', 'Applied'],
    rows,
    'No assignments.',
  );
}

/** The certificates nearest to expiry (at most `max`), soonest first. */
export function certificatesTable(certs: Certificate[], now: number, max = 8): HTMLElement {
  const end = (c: Certificate): number => Date.parse(c.status?.notAfter ?? '9999-12-31T00:00:00Z');
  const rows = [...certs]
    .sort((a, b) => end(a) - end(b))
    .slice(0, max)
    .map((c) => {
      const na = c.status?.notAfter;
      const left = na ? Date.parse(na) - now : undefined;
      const remaining =
        left === undefined ? state('unknown', 'Not issued') : left <= 0 ? state('bad', 'Expired') : countdown(left);
      const ready = findCondition(c.status?.conditions, 'Ready')?.status ?? 'Unknown';
      return [
        c.metadata.name,
        c.spec.node,
        ready === 'True' ? 'Ready' : `Not ready (${ready})`,
        na ? dateTime(na) : '—',
        remaining,
      ];
    });
  return table(
    `Certificates nearest to expiry (${Math.min(max, certs.length)} of ${certs.length})`,
    ['Certificate', 'Node', 'Ready', 'Not after', 'Remaining'],
    rows,
    'No certificates.',
  );
}

/** The most recent Warning events (at most `max`), newest first. */
export function warningsTable(events: Event[], now: number, max = 10): HTMLElement {
  const time = (e: Event): string => e.lastTimestamp ?? e.firstTimestamp ?? e.metadata.creationTimestamp ?? '';
  const rows = events
    .filter((e) => e.type === 'Warning')
    .sort((a, b) => Date.parse(time(b)) - Date.parse(time(a)))
    .slice(0, max)
    .map((e) => [
      `${e.involvedObject.kind} ${e.involvedObject.name}`,
      e.reason,
      e.message ?? '',
      String(e.count ?? 1),
      time(e) ? ago(now, time(e)) : '—',
    ]);
  return table(
    'Recent Warning events, newest first',
    ['Object', 'Reason', 'Message', 'Count', 'Last seen'],
    rows,
    'No Warning events.',
  );
}
