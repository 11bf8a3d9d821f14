/**
 * The node page's sections, each built once (a heading, a table with its caption and header cells) and filled
 * from every view the agent answers with. Only the rows and definitions are replaced, so keyboard focus and
 * scrolling stay where the reader left them. A figure that moves with time registers a ticker: the page calls
 * it every second with the milliseconds since the view was fetched (api/meta/node-page.ts `tickedSeconds`).
 */
import { tickedSeconds, type NodePageStatus } from '../../api/meta/node-page.ts';
import { h, replaceChildren, type Child } from '../shared/dom.ts';
import { duration, resourceState, servicePhase, stateWord, time } from './format.ts';

/** Updates one moving figure, given the milliseconds since the view was fetched. */
export type Ticker = (elapsedMs: number) => void;

/** One section: its element, and how to fill it from a view (returning its tickers). */
export interface Section {
  el: HTMLElement;
  fill(s: NodePageStatus): Ticker[];
}

/** A moving number of seconds: its text (and `data-seconds`) recomputed on every tick. */
function moving(seconds: number, sign: 1 | -1, text: (s: number) => string, id?: string): [HTMLElement, Ticker] {
  const el = h('span', { id, class: 'moving' });
  const tick: Ticker = (ms) => {
    const s = tickedSeconds(seconds, ms, sign);
    el.dataset.seconds = String(Math.floor(s));
    el.textContent = text(s);
  };
  tick(0);
  return [el, tick];
}

function section(id: string, title: string, ...body: Child[]): HTMLElement {
  return h('section', { 'aria-labelledby': `${id}-h`, id }, h('h2', { id: `${id}-h` }, title), ...body);
}

/** A table in a focusable scroll region: caption, header cells with scope, and a body the section fills. */
function table(id: string, caption: string, cols: string[]): { wrap: HTMLElement; body: HTMLTableSectionElement } {
  const body = h('tbody');
  const t = h(
    'table',
    { id: `${id}-table` },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...cols.map((c) => h('th', { scope: 'col' }, c)))),
    body,
  );
  const wrap = h('div', { class: 'scroll', role: 'region', 'aria-label': caption, tabindex: 0 }, t);
  return { wrap, body };
}

/** Rows, or one row that says there are none. */
function rows(body: HTMLTableSectionElement, cols: number, items: HTMLTableRowElement[], none: string): void {
  replaceChildren(body, items.length ? items : h('tr', {}, h('td', { colspan: cols }, none)));
}

/** The control plane as this node sees it, and the node's recovery deadline. */
export function controlPlaneSection(): Section {
  const dl = h('dl');
  return {
    el: section('control-plane', 'Control plane', dl),
    fill(s) {
      const cp = s.controlPlane;
      const ticks: Ticker[] = [];
      let state: Child;
      if (cp.reachable === false) {
        const [el, t] = moving(cp.unreachableSeconds, 1, duration, 'unreachable-for');
        ticks.push(t);
        const since = cp.unreachableSince ? [' (since ', time(cp.unreachableSince), ')'] : [];
        state = h('span', {}, stateWord('Unreachable', 'bad'), ' for ', el, ...since);
      } else state = cp.reachable ? stateWord('Reachable', 'ok') : stateWord('Not contacted yet', 'warn');
      let deadline: Child = 'none: this node holds no certificate';
      if (s.deadline) {
        const [el, t] = moving(s.deadline.budgetSeconds, -1, (x) => (x > 0 ? `in ${duration(x)}` : 'PASSED'));
        ticks.push(t);
        deadline = h('span', {}, el, ' (', time(s.deadline.notAfter), `; set by ${s.deadline.setBy})`);
      }
      replaceChildren(
        dl,
        h('dt', {}, 'State'),
        h('dd', { id: 'control-plane-state' }, state),
        h('dt', {}, 'Last contact'),
        h('dd', {}, cp.lastContact ? time(cp.lastContact) : 'never'),
        h('dt', {}, 'Recovery deadline'),
        h('dd', {}, deadline),
      );
      return ticks;
    },
  };
}

/** The Declaration in the agent's store: desired and applied generation, the last reconcile. */
export function declarationSection(): Section {
  const dl = h('dl');
  return {
    el: section('declaration', 'Declaration', dl),
    fill(s) {
      const d = s.declaration;
      const applied = d?.appliedGeneration;
      const gen: Child = !d
        ? 'none received yet'
        : applied === d.desiredGeneration
          ? h('span', {}, `${applied} `, stateWord('(applied)', 'ok'))
          : h(
              'span',
              {},
              `${applied ?? 'none'} `,
              stateWord(`(generation ${d.desiredGeneration} not applied yet)`, 'warn'),
            );
      const last = s.lastReconcile;
      replaceChildren(
        dl,
        h('dt', {}, 'Generation applied'),
        h('dd', { id: 'applied-generation' }, gen),
        h('dt', {}, 'Generation desired'),
        h('dd', { id: 'desired-generation' }, d ? String(d.desiredGeneration) : 'none'),
        h('dt', {}, 'Received'),
        h('dd', {}, d ? time(d.receivedAt) : 'never'),
        h('dt', {}, 'Last reconcile'),
        h('dd', {}, last ? h('span', {}, time(last.at), ` (${last.outcome})`) : 'none yet'),
      );
      return [];
    },
  };
}

/** The certificates the node holds with their remaining time (EXPIRED once past). */
export function certificatesSection(): Section {
  const { wrap, body } = table('certificates', 'Certificates held by this node, earliest expiry first', [
    'Certificate',
    'Not after',
    'Remaining',
  ]);
  return {
    el: section('certificates', 'Certificates', wrap),
    fill(s) {
      const ticks: Ticker[] = [];
      const items = s.certificates.map((c) => {
        const [el, t] = moving(c.remainingSeconds, -1, (x) => (x > 0 ? duration(x) : 'EXPIRED'));
        ticks.push(t);
        return h('tr', {}, h('th', { scope: 'row' }, c.name), h('td', {}, time(c.notAfter)), h('td', {}, el));
      });
      rows(body, 3, items, 'This node holds no certificate.');
      return ticks;
    },
  };
}

/** The declared resources in declaration order, with their state and message. */
export function resourcesSection(): Section {
  const cols = ['#', 'Resource', 'Kind', 'Owner', 'State', 'Message'];
  const { wrap, body } = table('resources', 'Declared resources, in the order they are applied', cols);
  return {
    el: section('resources', 'Declared resources', wrap),
    fill(s) {
      const items = s.resources.map((r, i) =>
        h(
          'tr',
          {},
          h('td', {}, String(i + 1)),
          h('th', { scope: 'row' }, r.id),
          h('td', {}, r.kind),
          h('td', {}, r.owner),
          h('td', {}, resourceState(r.state)),
          h('td', {}, r.message ?? ''),
        ),
      );
      rows(body, cols.length, items, 'Nothing is declared for this node.');
      return [];
    },
  };
}

/** The declared Services with their process: pid and restarts. */
export function servicesSection(): Section {
  const cols = ['Service', 'Driver', 'State', 'PID', 'Restarts', 'Last exit'];
  const { wrap, body } = table('services', 'Services declared for this node', cols);
  return {
    el: section('services', 'Services', wrap),
    fill(s) {
      const items = s.services.map((v) => {
        const exit = v.lastExit;
        const exitText = exit ? `${exit.signal ?? `code ${exit.code}`} at ` : '';
        return h(
          'tr',
          {},
          h('th', { scope: 'row' }, v.id),
          h('td', {}, v.driver),
          h('td', {}, servicePhase(v.driver, v.phase)),
          h('td', { class: 'pid' }, v.pid !== undefined ? String(v.pid) : '—'),
          h('td', { class: 'restarts' }, v.restarts !== undefined ? String(v.restarts) : '—'),
          h('td', {}, exit ? h('span', {}, exitText, time(exit.at)) : 'none'),
        );
      });
      rows(body, cols.length, items, 'No service is declared for this node.');
      return [];
    },
  };
}
