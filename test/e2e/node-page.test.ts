// Issue 15, a node's own page, end to end with real processes and Debian's chromium: the real
// `mesh-control-plane`, a node joined with its own credential running an assignment (a directory, a file, a
// supervised service) and a Route (its certificate's files and the HttpsProxy). The agent's page, on its metrics
// port, shows the node, the declared resources in the Declaration's order, the service's real pid and restarts,
// the generation applied and the certificate; axe finds nothing serious; no secret is in it. With the control
// plane SIGKILLed the page shows the unreachable time and it grows without a reload; with the agent SIGKILLed the
// page says the agent is not answering. The screenshot in the README is written here (test/browser.ts screenshotPath).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { routeFiles } from '../../api/v1alpha1/render-routes.ts';
import { servicePid, waitFor } from '../../agent/testing.ts';
import { axeViolations, browserUnavailable, launchBrowser, screenshotPath } from '../browser.ts';
import { REPO_ROOT } from '../harness.ts';
import {
  applyObject,
  assignmentObject,
  cmdline,
  createMesh,
  moduleObject,
  taggedCommand,
  waitApplied,
} from './mesh-helpers.ts';
import { agentStatus, joinNode, routeObject, startBackend, waitRouteReady } from './route-helpers.ts';

const unavailable = browserUnavailable();
if (unavailable && process.env.CI === 'true') throw new Error(`browser tests must run in CI: ${unavailable}`);

const SECRET_CONTENT = 'file-secret-5f1c9e';
const SECRET_ENV = 'env-secret-a83d20';
const SERVICE = 'web-on-a/server';

/** The texts of a table's row header cells (`th` in `tbody`), in order. */
const rowIds = (page: Page, table: string): Promise<string[]> =>
  page.locator(`#${table}-table tbody th`).allTextContents();

/** The text of a cell of the row whose header is `id`, by column (0 = the header cell's row start). */
const cell = (page: Page, table: string, id: string, col: number): Promise<string> =>
  page
    .locator(`#${table}-table tbody tr`, { has: page.locator('th', { hasText: id }) })
    .locator('td, th')
    .nth(col)
    .innerText();

/** The text of every file under `dir`. */
function allText(dir: string): string {
  return readdirSync(dir, { withFileTypes: true })
    .map((e) =>
      e.isDirectory() ? allText(join(dir, e.name)) : e.isFile() ? readFileSync(join(dir, e.name), 'utf8') : '',
    )
    .join('\n');
}

/** The node token the agent keeps in its store (its identity record), found in the store's files. */
function storedTokens(stateDir: string): string[] {
  return [...allText(join(stateDir, 'store')).matchAll(/"token":\s*"([^"]{8,})"/g)].map((m) => m[1]);
}

test(
  'a node’s own page: its resources, service pid and certificate from the agent; the unreachable time grows with the control plane SIGKILLed',
  { skip: unavailable },
  async (t) => {
    const mesh = createMesh(t);
    const backend = await startBackend();
    t.after(() => backend.server.close());
    const cp = await mesh.controlPlane();
    const admin = mesh.admin(cp);
    const a = await joinNode(mesh, cp, admin, 'a');
    const { stateDir, root } = mesh.node('a');
    await applyObject(
      admin,
      'modules',
      moduleObject('web', '1.0.0', [
        { id: 'dir', kind: 'Directory', spec: { path: '/srv/web' } },
        { id: 'conf', kind: 'File', spec: { path: '/srv/web/conf', content: `password=${SECRET_CONTENT}\n` } },
        {
          id: 'server',
          kind: 'Service',
          spec: { command: taggedCommand('node-page'), workingDirectory: '/srv/web', env: { API_KEY: SECRET_ENV } },
          dependsOn: ['dir'],
        },
      ]),
    );
    await applyObject(admin, 'assignments', assignmentObject('web-on-a', 'web', 'a'));
    await admin.create('routes', routeObject('site', 'site.mesh.test', 'a', backend.port));
    await waitApplied(admin, 'web-on-a', '1.0.0', 60_000);
    await waitRouteReady(admin, 'site', 90_000);
    const decl = await admin.get('declarations', 'a');
    await waitFor(
      async () => (await admin.get('declarations', 'a')).status?.appliedGeneration === decl.spec.generation,
      60_000,
      'the agent to apply the Declaration with the route',
    );
    const pid = servicePid(stateDir, SERVICE);
    assert.ok(pid && cmdline(pid)?.includes('node-page'), `the service runs (pid ${pid})`);

    const browser = await launchBrowser();
    t.after(() => browser.close());
    const page = await browser.newPage();
    await page.goto(`${a.agent.metrics}/`);
    await page.locator('#node').filter({ hasText: /^a$/ }).waitFor({ timeout: 30_000 });
    assert.equal(await page.title(), 'Node a — meshctl');

    // The declared resources in the Declaration's order, all Applied; the service's real pid; the generation.
    const ids = (await admin.get('declarations', 'a')).spec.resources.map((r: { id: string }) => r.id);
    assert.ok(ids.includes(SERVICE) && ids.some((id: string) => id.startsWith('route.site/')), ids.join(', '));
    await waitFor(
      async () => JSON.stringify(await rowIds(page, 'resources')) === JSON.stringify(ids),
      30_000,
      'the page to list the declared resources in order',
    );
    const states = await page.locator('#resources-table tbody td:nth-child(5)').allTextContents();
    assert.deepEqual(
      states,
      ids.map(() => 'Applied'),
    );
    assert.equal(await cell(page, 'services', SERVICE, 3), String(pid));
    assert.equal(await cell(page, 'services', SERVICE, 4), '0');
    assert.equal(await cell(page, 'services', SERVICE, 2), 'Running');
    assert.match(
      await page.locator('#applied-generation').innerText(),
      new RegExp(`^${decl.spec.generation} \\(applied\\)`),
    );
    assert.equal(await rowIds(page, 'certificates').then((r) => r.join()), 'site');
    assert.match(await cell(page, 'certificates', 'site', 2), /^\d+d/);
    assert.match(await page.locator('#control-plane-state').innerText(), /^Reachable$/);

    // Accessible: no serious or critical finding.
    const bad = (await axeViolations(page)).filter((v) => v.impact === 'serious' || v.impact === 'critical');
    assert.deepEqual(bad, [], JSON.stringify(bad, null, 2));

    // No secret: neither in the page nor in the JSON it reads.
    const keyPem = readFileSync(join(root, routeFiles('site').key), 'utf8');
    const secrets = [SECRET_CONTENT, SECRET_ENV, keyPem.split('\n')[1], cp.config.token!, ...storedTokens(stateDir)];
    assert.ok(storedTokens(stateDir).length > 0, 'the node token was found in the agent store to look for');
    const json = await (await fetch(`${a.agent.metrics}/status.json`)).text();
    const html = await page.content();
    for (const s of secrets) {
      assert.ok(s && !html.includes(s) && !json.includes(s), `a secret is shown: ${s.slice(0, 6)}…`);
    }

    // SIGKILL the control plane: the unreachable time appears and grows, without a reload.
    await page.evaluate(() => Reflect.set(globalThis, 'samePage', true));
    await cp.kill();
    const unreachable = page.locator('#unreachable-for');
    await unreachable.waitFor({ timeout: 30_000 });
    const first = Number(await unreachable.getAttribute('data-seconds'));
    const firstText = await unreachable.innerText();
    assert.match(await page.locator('#control-plane-state').innerText(), /^Unreachable for \d+s \(since .+\)$/);
    await waitFor(
      async () => Number(await unreachable.getAttribute('data-seconds')) >= first + 3,
      30_000,
      'the unreachable time to grow on the page',
    );
    const secondText = await unreachable.innerText();
    assert.ok(Number.parseInt(secondText) > Number.parseInt(firstText), `${secondText} after ${firstText}`);
    assert.equal(await page.evaluate(() => Reflect.get(globalThis, 'samePage')), true, 'the page was not reloaded');
    // The same clock as `mesh-agent status` (one computation), which also prints where the page is.
    const cli = agentStatus(stateDir).unreachableSeconds;
    const shown = Number(await unreachable.getAttribute('data-seconds'));
    assert.ok(Math.abs(cli - shown) <= 4, `mesh-agent status says ${cli}s, the page ${shown}s`);
    const text = spawnSync(process.execPath, ['--import', 'tsx', 'agent/main.ts', 'status', '--state-dir', stateDir], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    });
    assert.ok(text.stdout.includes(`Node page:      ${a.agent.metrics}/ `), text.stdout + text.stderr);
    await page.screenshot({ path: screenshotPath('node-page.png'), fullPage: true });

    // SIGKILL the agent: the page says it is not answering (the last answer stays, its age growing).
    await a.agent.kill('SIGKILL');
    await page.locator('#agent-state', { hasText: 'The agent is not answering since' }).waitFor({ timeout: 30_000 });
  },
);
