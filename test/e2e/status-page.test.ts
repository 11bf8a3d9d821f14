/**
 * The control plane's status page end to end: the real `mesh-control-plane` and three real `mesh-agent`
 * processes (300 ms heartbeats, a 3 s grace period on the Mesh), and Debian's chromium. Signing in with a wrong
 * token says so; with the admin token through the form the page shows three reachable nodes; a SIGKILLed agent
 * turns unreachable on the page without a reload; a SIGKILLed control plane is shown as lost with the data
 * marked stale; restarted on the same data dir and port, the page reconnects by itself (its session cookie
 * outlives the restart) and shows a change made after the restart. axe-core finds nothing serious; the test
 * writes the screenshot control-plane-page.png (test/browser.ts screenshotPath: the README's with MESHCTL_SCREENSHOTS=docs/screenshots).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Page } from 'playwright-core';
import { waitFor } from '../../agent/testing.ts';
import { axeViolations, browserUnavailable, launchBrowser, screenshotPath } from '../browser.ts';
import { applyObject, assignmentObject, createMesh, moduleObject } from './mesh-helpers.ts';

const unavailable = browserUnavailable();
if (unavailable && process.env.CI === 'true') throw new Error(`browser tests must run in CI: ${unavailable}`);

const GRACE_MS = 3000;
const NODES = ['node-a', 'node-b', 'node-c'];
const NOTE = [
  { id: 'dir', kind: 'Directory', spec: { path: '/srv/note' } },
  { id: 'file', kind: 'File', dependsOn: ['dir'], spec: { path: '/srv/note/version', content: '1.0.0\n' } },
];

/** The nodes table as shown: node name → the row's cells' text. */
function nodeRows(page: Page): Promise<Record<string, string[]>> {
  return page.$$eval('section[aria-labelledby="h-nodes"] tbody tr', (trs) =>
    Object.fromEntries(
      trs.map((tr) => {
        const cells = [...tr.querySelectorAll('th, td')].map((c) => (c.textContent ?? '').trim());
        return [cells[0] ?? '', cells];
      }),
    ),
  );
}

const connection = (page: Page): Promise<string> => page.locator('#connection').innerText();

test(
  'the status page: sign in, three nodes live, an agent and the control plane die, the page reconnects',
  { skip: unavailable, timeout: 240_000 },
  async (t) => {
    const mesh = createMesh(t);
    let cp = await mesh.controlPlane();
    const admin = mesh.admin(cp);
    await admin.patch('meshes', 'mesh', { spec: { reachabilityGracePeriod: `${GRACE_MS / 1000}s` } });
    // node-b is the overlay hub (as `meshctl init` declares it), and node-a runs an assignment.
    // (The control plane writes the Mesh's status too: retry on a conflict.)
    await waitFor(
      async () => {
        const m = await admin.get('meshes', 'mesh');
        return admin.updateStatus('meshes', { ...m, status: { ...(m.status ?? {}), hubNode: 'node-b' } });
      },
      20_000,
      'the Mesh status to name node-b the hub',
    );
    await applyObject(admin, 'modules', moduleObject('note', '1.0.0', NOTE));
    await applyObject(admin, 'assignments', assignmentObject('note-on-node-a', 'note', 'node-a'));
    const agents = Object.fromEntries(await Promise.all(NODES.map(async (n) => [n, await mesh.agent(n, cp)] as const)));
    const browser = await launchBrowser();
    t.after(() => browser.close());
    const page = await browser.newPage();

    // Every request the page makes to the API, to show that it lists once per connection and then only watches.
    const lists: string[] = [];
    page.on('request', (r) => {
      const u = new URL(r.url());
      if (u.pathname.startsWith('/apis/') && !u.searchParams.has('watch')) lists.push(u.pathname);
    });

    // 0. Keyboard: the skip link, then the token field, are the first stops.
    await page.goto(`${cp.url}/ui/`);
    await page.getByLabel('Admin token').waitFor({ timeout: 20_000 });
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), 'Skip to the status');
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement?.id), 'token');

    // 1. Sign in through the form: a wrong token is refused in words, the admin token lets the page in.
    const token = page.getByLabel('Admin token');
    await token.fill('not-the-admin-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'not the admin token' }).waitFor({ timeout: 20_000 });
    assert.equal(await token.inputValue(), '', 'the token field is cleared');
    await token.fill(cp.config.token!);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const cookies = await browser.context.cookies();
    assert.ok(
      cookies.every((c) => !c.value.includes(cp.config.token!)),
      'no cookie holds the token',
    );

    // 2. Three nodes, all reachable, live.
    await waitFor(
      async () => {
        const rows = await nodeRows(page);
        return NODES.every((n) => rows[n]?.[1]?.startsWith('Reachable')) && rows;
      },
      60_000,
      'three reachable nodes on the page',
    );
    await waitFor(
      async () => /Applied/.test(await page.locator('section[aria-labelledby="h-assignments"] tbody').innerText()),
      60_000,
      'the assignment shown Applied',
    );
    assert.match(await connection(page), /^Connected since \d\d:\d\d:\d\d; live\.$/);
    const listsWhenConnected = lists.length;
    assert.ok(listsWhenConnected >= 5, `the page listed each kind once on connecting: ${lists.join(', ')}`);
    await page.evaluate(() => Reflect.set(globalThis, 'notReloaded', true));

    // 3. node-b's agent dies: its row turns Unreachable within the grace period, without a reload.
    await agents['node-b'].kill('SIGKILL');
    const killedAt = Date.now();
    await waitFor(
      async () => (await nodeRows(page))['node-b']?.[1]?.startsWith('Unreachable since'),
      GRACE_MS + 20_000,
      'node-b unreachable on the page',
    );
    t.diagnostic(`node-b shown unreachable ${Date.now() - killedAt} ms after the kill (grace ${GRACE_MS} ms)`);
    assert.equal(await page.evaluate(() => Reflect.get(globalThis, 'notReloaded')), true, 'the page was not reloaded');
    assert.equal(
      lists.length,
      listsWhenConnected,
      `no list requests while connected (watch only): ${lists.join(', ')}`,
    );
    assert.match((await nodeRows(page))['node-a'][1], /^Reachable/);
    assert.match(
      await page.locator('section[aria-labelledby="h-stops"]').innerText(),
      /non-co-located overlay paths\s+Stopped: hub node-b unreachable since \d\d:\d\d:\d\d/,
    );

    // 4. Accessible, and the screenshot for the README.
    const serious = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(serious, [], JSON.stringify(serious, null, 2));
    await page.screenshot({ path: screenshotPath('control-plane-page.png'), fullPage: true });
    const html = await page.content();
    assert.ok(!html.includes(cp.config.token!), 'the page shows no token');

    // 5. The control plane dies: the page says so and marks what it shows as stale.
    const port = new URL(cp.url).port;
    await cp.kill();
    await waitFor(
      async () => /^Connection to the control plane lost since \d\d:\d\d:\d\d; retrying/.test(await connection(page)),
      30_000,
      'the page to say the connection is lost',
    );
    assert.ok(await page.locator('#stale').isVisible(), 'the data is marked stale');
    assert.match(
      await page.locator('section[aria-labelledby="h-stops"]').innerText(),
      /a new node joining\s+Stopped: the join token is checked by the control plane since/,
    );

    // 6. Restarted on the same data dir and port: the page reconnects by itself and shows a change made since.
    cp = await mesh.controlPlane({ listen: `127.0.0.1:${port}` });
    await mesh.admin(cp).patch('nodes', 'node-c', { spec: { site: 'after-restart' } });
    await waitFor(
      async () => (await nodeRows(page))['node-c']?.[4] === 'after-restart',
      60_000,
      'the page to show the change made after the restart',
    );
    assert.match(await connection(page), /^Reconnected at \d\d:\d\d:\d\d \(the connection was lost at/);
    assert.ok(await page.locator('#stale').isHidden(), 'no longer stale');
    assert.equal(await page.evaluate(() => Reflect.get(globalThis, 'notReloaded')), true, 'the page was not reloaded');
  },
);
