// The browser harness itself: Debian's chromium starts, loads a page from loopback, and axe-core finds a real
// violation (an image without alt text) and none on a clean page — so a page test's "no violations" means something.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { axeViolations, browserUnavailable, launchBrowser, type Browser } from './browser.ts';

const unavailable = browserUnavailable();
if (unavailable && process.env.CI === 'true') throw new Error(`browser tests must run in CI: ${unavailable}`);

const pages: Record<string, string> = {
  '/clean':
    '<!doctype html><html lang="en"><head><title>ok</title></head><body><main><h1>Fine</h1></main></body></html>',
  '/bad':
    '<!doctype html><html lang="en"><head><title>bad</title></head><body><main><img src="/x.png"></main></body></html>',
};
const server = createServer((req, res) => {
  res.writeHead(pages[req.url ?? ''] ? 200 : 404, { 'content-type': 'text/html' }).end(pages[req.url ?? ''] ?? '');
});
let browser: Browser;
let base = '';

before(async () => {
  if (unavailable) return;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  server.close();
});

test(
  'chromium loads a loopback page and axe-core tells a clean page from a broken one',
  { skip: unavailable },
  async () => {
    const page = await browser.newPage();
    await page.goto(`${base}/clean`);
    assert.equal(await page.locator('h1').textContent(), 'Fine');
    assert.deepEqual(await axeViolations(page), []);
    await page.goto(`${base}/bad`);
    const ids = (await axeViolations(page)).map((v) => v.id);
    assert.ok(ids.includes('image-alt'), `expected image-alt among ${ids.join(', ')}`);
  },
);
