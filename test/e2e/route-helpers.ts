/**
 * Shared helpers of the route e2e tests (route-*.test.ts): a node that joins with its own credential and
 * serves routes on unprivileged ports, a local backend service, HTTPS and HTTP requests to 127.0.0.1 with a
 * route's name (SNI and Host: the test resolves the name to loopback itself), and the real
 * `mesh-agent status` command.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect } from 'node:tls';
import type { HttpClient } from '../../api/client/http-client.ts';
import type { KubeObject } from '../../api/meta/types.ts';
import type { ClockReport } from '../../api/wire/node-clock.ts';
import type { Route } from '../../api/v1alpha1/generated/index.ts';
import { freePort, waitFor, type AgentProcess } from '../../agent/testing.ts';
import type { ControlPlaneProcess } from '../harness.ts';
import { REPO_ROOT } from '../harness.ts';
import { INTERVALS, meshctl, type Mesh } from './mesh-helpers.ts';
import { spawnAgentCommand } from './join-helpers.ts';

/** A joined node: its agent and the ports it serves routes on. */
export interface RouteNode {
  agent: AgentProcess;
  httpsPort: number;
  httpPort: number;
}

/** Joins node `name` with a fresh token (its own credential, as a real node) and sets its route ports. */
export async function joinNode(
  mesh: Mesh,
  cp: ControlPlaneProcess,
  admin: HttpClient,
  name: string,
  ports?: { httpsPort: number; httpPort: number },
): Promise<RouteNode> {
  const r = await meshctl(cp.meshconfigPath, ['token', 'create']);
  assert.equal(r.code, 0, r.stderr);
  const m = /--token (\S+) --ca-hash (\S+)/.exec(r.stdout);
  assert.ok(m, r.stdout);
  const dirs = mesh.node(name);
  mkdirSync(dirs.root, { recursive: true });
  const args = ['join', '--server', cp.url, '--token', m[1], '--ca-hash', m[2], '--name', name];
  const agent = await spawnAgentCommand([...args, '--state-dir', dirs.stateDir, '--root', dirs.root, ...INTERVALS]);
  mesh.track(agent.pid);
  const httpsPort = ports?.httpsPort ?? (await freePort());
  const httpPort = ports?.httpPort ?? (await freePort());
  // The Node exists once the join or the agent's first contact created it.
  const patch = async (): Promise<boolean> =>
    Boolean(await admin.patch('nodes', name, { spec: { httpsPort, httpPort } }));
  await waitFor(patch, 20_000, `node ${name}'s route ports set`);
  return { agent, httpsPort, httpPort };
}

/** A Route object. */
export function routeObject(name: string, host: string, node: string, port: number): Route {
  return { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Route', metadata: { name }, spec: { host, node, port } };
}

/** A local HTTP service on 127.0.0.1 that answers `hello <url>` and records the headers it saw. */
export async function startBackend(): Promise<{ server: Server; port: number; seen: IncomingMessage['headers'][] }> {
  const seen: IncomingMessage['headers'][] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    res.writeHead(200, { 'content-type': 'text/plain' }).end(`hello ${req.url}`);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, port: (server.address() as { port: number }).port, seen };
}

/** An HTTPS GET to 127.0.0.1:port with SNI and Host `host`, trusting only `ca`: status, body, the served leaf. */
export async function httpsGet(port: number, host: string, ca: string, path = '/') {
  const socket = connect({ host: '127.0.0.1', port, servername: host, ca });
  await once(socket, 'secureConnect');
  const leaf = socket.getPeerX509Certificate();
  const req = request({ createConnection: () => socket, path, headers: { host } });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  let body = '';
  for await (const c of res) body += String(c);
  socket.destroy();
  return { status: res.statusCode, body, leaf };
}

/** A plain-HTTP GET to 127.0.0.1:port with Host `host`. */
export async function httpGet(port: number, host: string, path: string) {
  const req = request({ host: '127.0.0.1', port, path, headers: { host } });
  req.end();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  let body = '';
  for await (const c of res) body += String(c);
  return { status: res.statusCode, location: res.headers.location, body };
}

/** Runs the real `mesh-agent status --state-dir DIR -o json` and parses its report. */
export function agentStatus(stateDir: string): ClockReport & { updatedAt: string } {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', 'agent/main.ts', 'status', '--state-dir', stateDir, '-o', 'json'],
    {
      cwd: REPO_ROOT,
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as ClockReport & { updatedAt: string };
}

/** Waits until the Route's Ready condition is True. */
export async function waitRouteReady(admin: HttpClient, name: string, timeoutMs = 60_000): Promise<void> {
  await waitFor(
    async () => {
      const r = (await admin.get('routes', name)) as KubeObject & {
        status?: { conditions?: Array<{ type: string; status: string }> };
      };
      return r.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    },
    timeoutMs,
    `route ${name} Ready=True`,
  );
}
