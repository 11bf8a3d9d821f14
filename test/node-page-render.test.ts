// The node page (web/node/) in Debian's chromium against the agent's real routes (agent/node-page-routes.ts on
// the metrics endpoint) serving a view with every bad state at once: each state is said in words, an expired
// certificate reads EXPIRED, a message from the node is shown as text (never markup), the times move between
// answers, axe finds nothing serious, and the page says when the agent stops answering.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { NodePageStatus } from '../api/meta/node-page.ts';
import { serveMetrics, type MetricsServer } from '../agent/metrics.ts';
import { nodePageRoutes } from '../agent/node-page-routes.ts';
import { idleAgentMetrics, waitFor } from '../agent/testing.ts';
import { axeViolations, browserUnavailable, launchBrowser, type Browser } from './browser.ts';

const unavailable = browserUnavailable();
if (unavailable && process.env.CI === 'true') throw new Error(`browser tests must run in CI: ${unavailable}`);

const NOW = Date.now();
const iso = (ms: number): string => new Date(ms).toISOString();
const INJECTED = '<img src=x onerror="document.title=1">';

const view = (): NodePageStatus => ({
  node: 'node-b',
  agentVersion: '0.1.0',
  generatedAt: iso(Date.now()),
  controlPlane: {
    reachable: false,
    lastContact: iso(NOW - 601_000),
    unreachableSince: iso(NOW - 600_000),
    unreachableSeconds: 600,
  },
  certificates: [
    { name: 'old', notAfter: iso(NOW - 60_000), remainingSeconds: -60, expired: true },
    { name: 'web', notAfter: iso(NOW + 3_000), remainingSeconds: 3, expired: false },
  ],
  deadline: { notAfter: iso(NOW - 60_000), budgetSeconds: -60, setBy: 'certificate old' },
  declaration: { desiredGeneration: 7, appliedGeneration: 6, receivedAt: iso(NOW - 700_000) },
  resources: [
    { id: 'a/dir', kind: 'Directory', owner: 'a', state: 'Applied' },
    { id: 'a/conf', kind: 'File', owner: 'a', state: 'Failed', message: `EACCES ${INJECTED}` },
    { id: 'a/svc', kind: 'Service', owner: 'a', state: 'DependencyFailed', message: 'a/conf failed' },
    { id: 'a/new', kind: 'File', owner: 'a', state: 'Pending' },
    { id: 'a/cert', kind: 'File', owner: 'a', state: 'Waiting', message: 'waits for certificate "web"' },
  ],
  services: [
    {
      id: 'a/svc',
      driver: 'process',
      phase: 'backoff',
      pid: 99,
      restarts: 4,
      lastExit: { code: 1, signal: null, at: iso(NOW - 5000) },
    },
  ],
  lastReconcile: { at: iso(NOW - 1000), outcome: 'failure' },
});

let browser: Browser;
let srv: MetricsServer;
let serve: (listen: string) => Promise<MetricsServer>;

before(async () => {
  if (unavailable) return;
  const metrics = idleAgentMetrics('node-b');
  const page = nodePageRoutes({ node: 'node-b', view: async () => view() });
  serve = (listen) => serveMetrics({ listen, metrics, health: () => ({ ok: true }), page });
  srv = await serve('127.0.0.1:0');
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await srv?.close();
});

test(
  'the node page says every state in words, shows node text as text, ticks, and reports a silent agent',
  { skip: unavailable },
  async () => {
    const page = await browser.newPage();
    await page.goto(`${srv.url}/`);
    await page.locator('#node', { hasText: 'node-b' }).waitFor({ timeout: 30_000 });
    const state = (id: string) =>
      page
        .locator('#resources-table tbody tr', { has: page.locator('th', { hasText: id }) })
        .locator('td')
        .nth(3)
        .innerText();
    assert.equal(await state('a/dir'), 'Applied');
    assert.equal(await state('a/conf'), 'Failed');
    assert.equal(await state('a/svc'), 'Not applied: a dependency failed');
    assert.equal(await state('a/new'), 'Pending (not reconciled yet)');
    assert.equal(await state('a/cert'), 'Waiting for its certificate (not issued yet)');
    assert.ok(
      (await page.locator('#resources-table').innerText()).includes(`EACCES ${INJECTED}`),
      'the message is shown as text',
    );
    assert.equal(await page.locator('#resources-table img').count(), 0, 'no markup from a message');
    assert.match(
      await page.locator('#services-table tbody tr').innerText(),
      /a\/svc\tprocess\tExited, waiting to restart\t99\t4\tcode 1 at /,
    );
    assert.match(await page.locator('#applied-generation').innerText(), /^6 \(generation 7 not applied yet\)$/);
    assert.match(await page.locator('#control-plane-state').innerText(), /^Unreachable for 10m\d*s? \(since .+\)$/);
    assert.match(await page.locator('#control-plane').innerText(), /Recovery deadline\s+PASSED/);
    const remaining = page.locator('#certificates-table tbody td:nth-child(3)');
    assert.equal(await remaining.first().innerText(), 'EXPIRED');
    // Keyboard: the skip link first, then each table's scroll region, named by its caption.
    const focused = async (): Promise<string> =>
      page.evaluate(() => {
        const el = document.activeElement;
        return el?.getAttribute('aria-label') ?? el?.textContent ?? '';
      });
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Skip to the node’s state');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Certificates held by this node, earliest expiry first');
    await page.keyboard.press('Tab');
    assert.equal(await focused(), 'Declared resources, in the order they are applied');
    const bad = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad, [], JSON.stringify(bad, null, 2));
    // The agent goes silent: the page says so, and its own clock moves the last answer on ('web' had 3 s left).
    await srv.close();
    await page.locator('#agent-state', { hasText: 'The agent is not answering since' }).waitFor({ timeout: 30_000 });
    await waitFor(
      async () => (await remaining.nth(1).innerText()) === 'EXPIRED',
      30_000,
      'the certificate with 3 s left at the last answer to read EXPIRED on the page’s own clock',
    );
    assert.match(await page.locator('#view-age').innerText(), /^Last answer from the agent: \d+s ago\.$/);
    // The agent is back on its port: the page is live again by itself.
    srv = await serve(`127.0.0.1:${srv.port}`);
    await page.locator('#agent-state', { hasText: /^Live: the agent answers/ }).waitFor({ timeout: 30_000 });
  },
);
