// `meshctl dashboard` against the real server: it prints the page and a one-time link that signs a browser in
// once; it opens the link with xdg-open when there is a display (a stand-in xdg-open on PATH records what it
// was given), not without one or with --no-open; a meshconfig without the admin token gets no link.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { waitFor } from '../../agent/testing.ts';
import { captureOutput, REPO_ROOT, startServer, type TestServer } from '../harness.ts';

let server: TestServer;
const dir = mkdtempSync(join(tmpdir(), 'meshctl-dashboard-'));
const opened = join(dir, 'opened');

before(async () => {
  server = await startServer({ ui: true });
  writeFileSync(join(dir, 'xdg-open'), `#!/bin/sh\nprintf '%s' "$1" > '${opened}'\n`);
  chmodSync(join(dir, 'xdg-open'), 0o755);
});
after(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `meshctl dashboard` through tsx with `env` over a clean environment (no display unless given). */
function dashboard(args: string[], env: Record<string, string>, config = server.meshconfigPath) {
  const base = { ...process.env };
  for (const k of ['MESHCONFIG', 'DISPLAY', 'WAYLAND_DISPLAY']) delete base[k];
  const child = spawn(process.execPath, ['--import', 'tsx', 'cli/main.ts', '--config', config, 'dashboard', ...args], {
    cwd: REPO_ROOT,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = captureOutput(child);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('close', (code) => resolve({ code, stdout: out.stdout(), stderr: out.stderr() })),
  );
}

const linkIn = (stdout: string): string => {
  const m = /^ {2}(https:\/\/\S+\/ui\/sign-in\?code=\S+)$/m.exec(stdout);
  assert.ok(m, `no link in:\n${stdout}`);
  return m[1];
};

test('without a display: prints the page and a one-time link, opens nothing; the link works once', async () => {
  const r = await dashboard([], {});
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`^The status page: ${server.url}/ui/$`, 'm'));
  assert.match(r.stderr, /Not opened in a browser: no display/);
  assert.ok(!r.stdout.includes(server.adminToken), 'the admin token is not printed');
  const path = new URL(linkIn(r.stdout)).pathname + new URL(linkIn(r.stdout)).search;
  const first = await server.request('GET', path, undefined, { authorization: null });
  assert.equal(first.status, 303);
  assert.equal(first.headers.location, '/ui/');
  const second = await server.request('GET', path, undefined, { authorization: null });
  assert.equal(second.status, 403);
  assert.match(second.text, /already been used/);
});

test('with a display it opens the link with xdg-open; --no-open does not', async () => {
  const env = { DISPLAY: ':99', PATH: `${dir}:${process.env.PATH ?? ''}` };
  const r = await dashboard([], env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Opened it with xdg-open/);
  const url = await waitFor(() => existsSync(opened) && readFileSync(opened, 'utf8'), 10_000, 'xdg-open to be run');
  assert.equal(url, linkIn(r.stdout));
  rmSync(opened);
  const quiet = await dashboard(['--no-open'], env);
  assert.equal(quiet.code, 0, quiet.stderr);
  assert.match(quiet.stderr, /Not opened in a browser: --no-open/);
  // dashboard waits for the opener it starts to exit, so had it started one, the file would be there by now.
  assert.ok(!existsSync(opened), 'xdg-open must not run with --no-open');
});

test('a meshconfig without the admin token gets no link', async () => {
  const other = join(dir, 'other.meshconfig');
  writeFileSync(other, readFileSync(server.meshconfigPath, 'utf8').replace(server.adminToken, 'not-the-admin-token'));
  const r = await dashboard(['--no-open'], {}, other);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /Unauthorized: a sign-in link needs the admin token/);
  assert.doesNotMatch(r.stdout, /sign-in\?code=/);
});
