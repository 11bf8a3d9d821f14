// Writes dist/meshctl-cli.js.cache, the V8 code cache cli/launcher.ts runs meshctl from: one run of
// `meshctl get nodes cache-warmup` with MESHCTL_WRITE_CODE_CACHE=1, so that the cache holds the functions a `get`
// compiles (the bundle's top level alone saves about half as much: bench/RESULTS.md §3). The run talks to a stand-in
// answering that one GET on a Unix socket in a temp dir (the local-socket path of api/client, no TLS, no control
// plane needed to build), through a meshconfig whose HTTPS server is unreachable. A failed run leaves no cache, and
// meshctl then compiles as usual: the build warns and goes on.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const NODE = {
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Node',
  metadata: { name: 'cache-warmup', creationTimestamp: '2026-01-01T00:00:00Z', resourceVersion: '1' },
  spec: { site: 'build' },
  status: {},
};

/** Runs meshctl in `distDir` once against a stand-in server and leaves the code cache beside its bundle. */
export async function writeCodeCache(distDir) {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-code-cache-'));
  const socket = join(dir, 'api.sock');
  const server = createServer((req, res) => {
    const body = JSON.stringify(req.url.endsWith('/nodes/cache-warmup') ? NODE : { kind: 'Status', code: 404 });
    res.writeHead(req.url.endsWith('/nodes/cache-warmup') ? 200 : 404, { 'content-type': 'application/json' });
    res.end(body);
  });
  await new Promise((ok) => server.listen(socket, ok));
  const config = join(dir, 'meshconfig');
  writeFileSync(config, meshconfig(socket), { mode: 0o600 });
  const env = { ...process.env, MESHCTL_WRITE_CODE_CACHE: '1' };
  delete env.NODE_OPTIONS;
  const bin = resolve(distDir, 'meshctl.js');
  try {
    await new Promise((ok, fail) =>
      execFile(process.execPath, [bin, '--config', config, 'get', 'nodes', 'cache-warmup'], { env }, (err, out, e) =>
        err || !out.includes('cache-warmup') ? fail(new Error(`${err?.message ?? ''} ${e}`)) : ok(),
      ),
    );
  } catch (e) {
    process.stderr.write(`build: warning: no code cache for meshctl (it runs, compiling as usual): ${e.message}\n`);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A meshconfig whose only usable way in is the local socket (the HTTPS port 1 on loopback refuses). */
function meshconfig(socket) {
  const cluster = {
    server: 'https://127.0.0.1:1',
    extensions: [{ name: 'meshctl.dev/local-socket', extension: { path: socket } }],
  };
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user: { token: 'build' } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'c',
  });
}
