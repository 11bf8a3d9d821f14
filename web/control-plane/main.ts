/**
 * The control plane's status page (served under `/ui/` by api/server/ui/): sign in, then the mesh live from
 * the API's watch (live.ts) — the connection's state, ADR 0053's table of what is stopped, the recovery clock
 * ticking, the nodes, assignments, certificates nearest to expiry and recent Warning events (tables.ts).
 */
import type { Assignment, Certificate, Event, Mesh, Node } from '../../api/v1alpha1/generated/index.ts';
import { recoveryDeadlineOf } from '../../api/v1alpha1/recovery-deadline.ts';
import { whatStops } from '../../api/v1alpha1/what-stops.ts';
import { h, replaceChildren } from '../shared/dom.ts';
import { connectionText } from './connection.ts';
import { clockSection } from './clock.ts';
import { Live } from './live.ts';
import { signInForm } from './sign-in.ts';
import { assignmentsTable, certificatesTable, nodesTable, stopsTable, warningsTable } from './tables.ts';
import './style.css';

const section = (id: string, title: string): { el: HTMLElement; body: HTMLElement } => {
  const body = h('div', { class: 'body' });
  return { el: h('section', { 'aria-labelledby': id }, h('h2', { id }, title), body), body };
};

const conn = h('p', { id: 'connection', role: 'status', 'aria-live': 'polite' });
const connDetail = h('p', { id: 'connection-detail' });
const signOut = h('button', { type: 'button', id: 'sign-out', hidden: true }, 'Sign out');
const stale = h('p', { id: 'stale', class: 'stale', hidden: true });
const parts = {
  stops: section('h-stops', 'What is stopped right now'),
  clock: section('h-clock', 'Recovery clock and backup'),
  nodes: section('h-nodes', 'Nodes'),
  assignments: section('h-assignments', 'Assignments'),
  certificates: section('h-certificates', 'Certificates'),
  warnings: section('h-warnings', 'Recent Warning events'),
};
const dashboard = h('div', { id: 'dashboard', hidden: true }, stale, ...Object.values(parts).map((p) => p.el));
const signIn = h('div', { id: 'sign-in-view', hidden: true });
const live = new Live(() => render());

function render(): void {
  const now = Date.now();
  const c = live.conn;
  const text = connectionText(c, now);
  if (conn.textContent !== text.status) conn.textContent = text.status;
  connDetail.textContent = text.detail;
  conn.className = `connection ${c.state}`;
  signIn.hidden = c.state !== 'signed-out';
  signOut.hidden = c.state === 'signed-out';
  dashboard.hidden = c.state === 'signed-out' || (c.state === 'connecting' && live.items('nodes').length === 0);
  if (c.state === 'signed-out') return;
  const lost = c.state === 'lost' ? c : undefined;
  stale.hidden = !lost;
  dashboard.classList.toggle('is-stale', lost !== undefined);
  if (lost)
    stale.textContent = `Stale: what follows is as the page last saw it, before ${new Date(lost.since).toLocaleTimeString()}.`;
  const mesh = live.items<Mesh>('meshes')[0];
  const nodes = live.items<Node>('nodes');
  const certificates = live.items<Certificate>('certificates');
  const down = lost
    ? { controlPlaneDown: true, downSince: new Date(lost.since).toISOString() }
    : { controlPlaneDown: false };
  replaceChildren(parts.stops.body, stopsTable(whatStops({ ...down, ...(mesh ? { mesh } : {}), nodes })));
  replaceChildren(parts.clock.body, clockSection(mesh, recoveryDeadlineOf(mesh, certificates), now));
  replaceChildren(parts.nodes.body, nodesTable(nodes, now));
  replaceChildren(parts.assignments.body, assignmentsTable(live.items<Assignment>('assignments')));
  replaceChildren(parts.certificates.body, certificatesTable(certificates, now));
  replaceChildren(parts.warnings.body, warningsTable(live.items<Event>('events'), now));
}

signIn.append(
  signInForm(() => {
    live.start();
    signOut.focus();
  }),
);
signOut.addEventListener('click', () => {
  void fetch('/ui/sign-out', { method: 'POST', credentials: 'same-origin' }).finally(() => {
    live.stop();
    live.conn = { state: 'signed-out' };
    render();
    document.getElementById('token')?.focus();
  });
});
document.body.append(
  h('a', { href: '#main', class: 'skip' }, 'Skip to the status'),
  h('header', {}, h('h1', {}, 'meshctl — control plane'), conn, connDetail, signOut),
  h('main', { id: 'main', tabindex: -1 }, signIn, dashboard),
  h(
    'footer',
    {},
    h('p', {}, 'Live from the control plane’s API watch. Read-only: changes need meshctl and the admin token.'),
  ),
);
live.start();
setInterval(render, 1000);
