/**
 * A node's own page, served by its agent (agent/node-page-routes.ts): what the agent holds about this node,
 * read from `/status.json` every 2 s — no control plane needed. Between answers the moving figures (how long
 * the control plane has been unreachable, each certificate's remaining time, the deadline) tick every second.
 * When the agent itself stops answering the page says so, and since when, above the last answer it got.
 */
import type { NodePageStatus } from '../../api/meta/node-page.ts';
import { h, replaceChildren } from '../shared/dom.ts';
import { duration, stateWord, time } from './format.ts';
import {
  certificatesSection,
  controlPlaneSection,
  declarationSection,
  resourcesSection,
  servicesSection,
  type Ticker,
} from './sections.ts';
import './node.css';

const POLL_MS = 2000;
const TIMEOUT_MS = 5000;

const sections = [
  controlPlaneSection(),
  declarationSection(),
  certificatesSection(),
  resourcesSection(),
  servicesSection(),
];
const title = h('h1', { id: 'node-name' }, 'Node');
const agentState = h('p', { id: 'agent-state', role: 'status' }, 'Asking this node’s agent…');
const age = h('p', { id: 'view-age' });
const main = h('main', { id: 'main' }, ...sections.map((s) => s.el));

let fetchedAt = 0;
let tickers: Ticker[] = [];
/** Whether the last request got an answer (undefined before the first), and since when it has not. */
let live: boolean | undefined;
let failingSince: number | undefined;

document.body.append(
  h('a', { class: 'skip', href: '#main' }, 'Skip to the node’s state'),
  h(
    'header',
    {},
    title,
    h(
      'p',
      { class: 'lead' },
      'Served by this node’s own agent from its own store: it works while the control plane is down.',
    ),
    agentState,
    age,
  ),
  main,
  h('footer', {}, h('p', {}, 'Read-only. The same clock in a terminal: ', h('code', {}, 'mesh-agent status'), '.')),
);

/** Fills the page from one answer of the agent. */
function show(s: NodePageStatus): void {
  fetchedAt = Date.now();
  document.title = `Node ${s.node} — meshctl`;
  replaceChildren(title, 'Node ', h('span', { id: 'node' }, s.node));
  tickers = sections.flatMap((sec) => sec.fill(s));
}

/** Says whether the agent answers; while it does not, since when. */
function showAgentState(): void {
  if (failingSince === undefined) {
    replaceChildren(agentState, stateWord('Live', 'ok'), ': the agent answers; refreshed every 2 s.');
    return;
  }
  replaceChildren(
    agentState,
    stateWord('The agent is not answering', 'bad'),
    ' since ',
    time(new Date(failingSince).toISOString()),
    fetchedAt ? '. The figures below are from its last answer, moved on by this page’s clock.' : '.',
  );
}

function tick(): void {
  const elapsed = Date.now() - fetchedAt;
  for (const t of tickers) t(elapsed);
  age.textContent = fetchedAt ? `Last answer from the agent: ${duration(elapsed / 1000)} ago.` : '';
}

async function poll(): Promise<void> {
  try {
    const res = await fetch('/status.json', { cache: 'no-store', signal: AbortSignal.timeout(TIMEOUT_MS) });
    if (!res.ok) throw new Error(`HTTP ${res.status}`);
    show((await res.json()) as NodePageStatus);
    if (live !== true) {
      live = true;
      failingSince = undefined;
      showAgentState();
    }
  } catch {
    if (live !== false) {
      live = false;
      failingSince = Date.now();
      showAgentState();
    }
  }
  tick();
  setTimeout(() => void poll(), POLL_MS);
}

setInterval(tick, 1000);
void poll();
