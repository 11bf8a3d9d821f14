// The status page's endpoints on the real server: the page and its assets with PAGE_HEADERS and no secret; the
// sign-in form's token check; the session cookie's reads-only grant; forged and expired cookies; one-time links
// (single use, expiry on a fake clock); the session key surviving a restart.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { FakeClock } from '../../meta/fake-clock.ts';
import { startServer, type TestServer } from '../../../test/harness.ts';
import { SESSION_COOKIE, UiSessions } from './ui-session.ts';

const clock = new FakeClock({ start: Date.parse('2026-12-01T12:00:00Z') });
let server: TestServer;
const anon = { authorization: null };

before(async () => {
  server = await startServer({ ui: true, clock });
});
after(() => server.stop());

/** Signs in with the admin token through POST /ui/session; the cookie header to send back. */
async function signIn(): Promise<string> {
  const r = await server.request('POST', '/ui/session', { token: server.adminToken }, anon);
  assert.equal(r.status, 204, r.text);
  return cookieOf(r.headers['set-cookie']);
}

function cookieOf(setCookie: string[] | undefined): string {
  const c = setCookie?.find((s) => s.startsWith(`${SESSION_COOKIE}=`));
  assert.ok(c, `no session cookie in ${JSON.stringify(setCookie)}`);
  return c.split(';')[0];
}

test('the page, its script and stylesheet are served with PAGE_HEADERS and hold no secret', async () => {
  for (const [path, type] of [
    ['/ui/', 'text/html'],
    ['/ui/control-plane.js', 'text/javascript'],
    ['/ui/control-plane.css', 'text/css'],
  ] as const) {
    const r = await server.request('GET', path, undefined, anon);
    assert.equal(r.status, 200, `${path}: ${r.text.slice(0, 200)}`);
    assert.match(String(r.headers['content-type']), new RegExp(type));
    assert.match(String(r.headers['content-security-policy']), /default-src 'none'/);
    assert.equal(r.headers['cache-control'], 'no-store');
    assert.ok(!r.text.includes(server.adminToken), `${path} contains the admin token`);
    assert.equal(r.headers['set-cookie'], undefined);
  }
  assert.equal((await server.request('GET', '/ui', undefined, anon)).status, 308);
  assert.equal((await server.request('GET', '/ui/nothing', undefined, anon)).status, 404);
});

test('a wrong token is refused with a clear message and sets no cookie', async () => {
  const r = await server.request('POST', '/ui/session', { token: 'not-the-token' }, anon);
  assert.equal(r.status, 401);
  assert.equal(r.json.kind, 'Status');
  assert.match(r.json.message, /not the admin token.*nothing was stored/);
  assert.equal(r.headers['set-cookie'], undefined);
  const bad = await server.request('POST', '/ui/session', 'token=x', { ...anon, 'content-type': 'text/plain' });
  assert.equal(bad.status, 400);
  assert.equal(bad.headers['set-cookie'], undefined);
});

test('the cookie is HttpOnly, Secure, SameSite=Strict and grants reads, not writes or secrets', async () => {
  const r = await server.request('POST', '/ui/session', { token: server.adminToken }, anon);
  const set = String(r.headers['set-cookie']);
  for (const attr of ['HttpOnly', 'Secure', 'SameSite=Strict', 'Path=/']) assert.ok(set.includes(attr), set);
  assert.ok(!set.includes(server.adminToken), 'the cookie carries the admin token');
  const cookie = cookieOf(r.headers['set-cookie']);
  const withCookie = { ...anon, cookie };
  const list = await server.request('GET', '/apis/meshctl.dev/v1alpha1/nodes', undefined, withCookie);
  assert.equal(list.status, 200, list.text);
  assert.equal((await server.request('GET', '/apis/meshctl.dev/v1alpha1/nodes', undefined, anon)).status, 401);
  const node = { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'n1' }, spec: {} };
  const create = await server.request('POST', '/apis/meshctl.dev/v1alpha1/nodes', node, withCookie);
  assert.equal(create.status, 401, 'a write with only the cookie must be refused');
  assert.equal((await server.request('GET', '/apis/meshctl.dev/v1alpha1/nodes/n1', undefined, withCookie)).status, 404);
  for (const path of [
    '/metrics',
    '/apis/meshctl.dev/v1alpha1/certificates/web/material',
    '/apis/meshctl.dev/v1alpha1/nodes/n1/logs',
  ])
    assert.equal((await server.request('GET', path, undefined, withCookie)).status, 401, path);
  const del = await server.request('DELETE', '/apis/meshctl.dev/v1alpha1/meshes/mesh', undefined, withCookie);
  assert.equal(del.status, 401);
});

test('a forged or expired cookie is refused', async () => {
  const cookie = await signIn();
  const nodes = '/apis/meshctl.dev/v1alpha1/nodes';
  const [, value] = cookie.split('=');
  const [v, exp, mac] = value.split('.');
  const later = `${SESSION_COOKIE}=${v}.${Number(exp) + 86_400_000}.${mac}`;
  assert.equal((await server.request('GET', nodes, undefined, { ...anon, cookie: later })).status, 401);
  const flipped = `${SESSION_COOKIE}=${v}.${exp}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
  assert.equal((await server.request('GET', nodes, undefined, { ...anon, cookie: flipped })).status, 401);
  assert.equal((await server.request('GET', nodes, undefined, { ...anon, cookie })).status, 200);
  clock.advance(12 * 3_600_000 + 1000);
  assert.equal((await server.request('GET', nodes, undefined, { ...anon, cookie })).status, 401, 'expired');
});

test('a one-time link: admin only, redirects to /ui/ with the cookie, refused the second time and once expired', async () => {
  const refused = await server.request('POST', '/ui/sign-in-links', undefined, anon);
  assert.equal(refused.status, 401);
  const withCookie = await server.request('POST', '/ui/sign-in-links', undefined, { ...anon, cookie: await signIn() });
  assert.equal(withCookie.status, 401, 'the cookie must not create links');
  const link = await server.request('POST', '/ui/sign-in-links', undefined, {});
  assert.equal(link.status, 201, link.text);
  assert.match(link.json.path, /^\/ui\/sign-in\?code=[\w-]{20,}$/);
  const first = await server.request('GET', link.json.path, undefined, anon);
  assert.equal(first.status, 303);
  assert.equal(first.headers.location, '/ui/');
  const cookie = cookieOf(first.headers['set-cookie']);
  assert.equal(
    (await server.request('GET', '/apis/meshctl.dev/v1alpha1/nodes', undefined, { ...anon, cookie })).status,
    200,
  );
  const second = await server.request('GET', link.json.path, undefined, anon);
  assert.equal(second.status, 403);
  assert.match(second.text, /already been used/);
  assert.equal(second.headers['set-cookie'], undefined);
  const late = await server.request('POST', '/ui/sign-in-links', undefined, {});
  clock.advance(120_001);
  const expired = await server.request('GET', late.json.path, undefined, anon);
  assert.equal(expired.status, 403);
  assert.match(expired.text, /expired/);
  assert.equal(expired.headers['set-cookie'], undefined);
  const unknown = await server.request('GET', '/ui/sign-in?code=made-up', undefined, anon);
  assert.match(unknown.text, /not known here/);
});

test('sign-out removes the cookie; the session key is kept in the data dir, 0600', async () => {
  const r = await server.request('POST', '/ui/sign-out', undefined, anon);
  assert.equal(r.status, 204);
  assert.match(String(r.headers['set-cookie']), new RegExp(`^${SESSION_COOKIE}=; .*Max-Age=0`));
  const keyFile = join(server.dataDir, 'ui-session.key');
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  assert.match(readFileSync(keyFile, 'utf8'), /^[0-9a-f]{64}\n$/);
});

test('a session survives a restart on the same data dir, and ends when the admin token changes', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-ui-'));
  try {
    const first = await startServer({ ui: true, dataDir });
    const r = await first.request('POST', '/ui/session', { token: first.adminToken }, anon);
    const cookie = cookieOf(r.headers['set-cookie']);
    await first.stop();
    const again = await startServer({ ui: true, dataDir });
    const nodes = '/apis/meshctl.dev/v1alpha1/nodes';
    const read = await again.request('GET', nodes, undefined, { ...anon, cookie });
    await again.stop();
    assert.equal(read.status, 200, read.text);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  let admin = 'a'.repeat(64);
  const sessions = new UiSessions({ key: Buffer.alloc(32, 1), adminTokenSha256: () => admin, clock });
  const { value } = sessions.issue();
  assert.ok(sessions.valid(value));
  admin = 'b'.repeat(64);
  assert.ok(!sessions.valid(value), 'a rotated admin token must end the session');
});
