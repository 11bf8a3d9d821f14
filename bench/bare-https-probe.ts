/**
 * Probe (issue 14): the floor Node's own HTTPS stack sets under the scale bench's steady agent load, with no control
 * plane behind it — to compare with the control plane's heartbeat CPU (bench/hb-probe.ts) on the same machine.
 *
 * The server is node:https with the control plane's TLS settings, serving certificate (made as `mesh-control-plane`
 * makes it) and keep-alive timeout. It answers a PATCH with a ~1.2 KiB Node-like JSON (the body parsed, the contact
 * time copied in), a POST with a short Status, and holds a GET open, writing a bookmark line every 30 s. The clients
 * are 3 processes of N/3 agents each; per agent, a watch connection and a kept-alive request connection, a PATCH every
 * 10 s ± 10 % and a POST of two log lines every 30 s: the requests, connections and rates of the scale bench's
 * simulated agents. Once every watch is open and 20 s more have passed, it prints the server's CPU in three 30 s
 * windows (with their bounds in the clock of a `--cpu-prof` profile).
 *
 * `BALLAST=K` first fills the server's heap with K small objects that live as long as it (200,000 ≈ 230 MiB, about
 * the control plane's heap at N = 5,000), to see what the size of the heap alone costs per request. `B2B=1` instead
 * sends 3,000 PATCHes one after another over one connection and prints the server's CPU per request.
 *
 * `TIMERS` and `TTLS` add timers like the control plane's WorkQueue delays (startTimers).
 *
 * Run: `N=5000 node --max-old-space-size=1024 --import tsx bench/bare-https-probe.ts` (more than 1,000 agents under
 * the machine's bench lock).
 */
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureControlPlaneFiles } from '../api/server/pki/first-start.ts';
import { KEEP_ALIVE_TIMEOUT_MS, TLS_SETTINGS } from '../api/server/listen.ts';
import { sleep } from './lib/load.ts';
import { cpuSecondsOf } from './lib/proc.ts';

const N = Number(process.env.N ?? 1000);
const WORKERS = 3;
const [mode = 'server', portArg = '0', workerArg = '0'] = process.argv.slice(2);

/** A Node as the control plane stores one of the bench's nodes, about as large. */
function nodeObject(i: number, contact: string) {
  return {
    apiVersion: 'meshctl.io/v1alpha1',
    kind: 'Node',
    metadata: {
      name: `node-${i}`,
      uid: '2b6f0c1e-8a0b-4d6e-9f5a-0c1d2e3f4a5b',
      resourceVersion: '123456',
      generation: 1,
      creationTimestamp: '2026-12-03T06:00:00Z',
      labels: { 'meshctl.io/site': 'bench' },
    },
    spec: { site: 'bench', endpoint: '198.18.0.1:51820' },
    status: {
      conditions: [
        {
          type: 'Reachable',
          status: 'True',
          reason: 'HeartbeatReceived',
          message: 'the agent reported 3 s ago',
          lastTransitionTime: '2026-12-03T06:00:00Z',
        },
        {
          type: 'Applied',
          status: 'True',
          reason: 'Applied',
          message: 'all 3 resources applied',
          lastTransitionTime: '2026-12-03T06:00:00Z',
        },
      ],
      agentVersion: 'bench-sim',
      declaration: { generation: 3, appliedGeneration: 3 },
      overlay: {
        address: '100.64.0.10',
        publicKey: 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG=',
        interface: 'mesh0',
      },
      controlPlaneLastContact: contact,
      lastSeen: '2026-12-03T06:00:00Z',
    },
  };
}

function answer(res: ServerResponse, code: number, body: string): void {
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** The ballast (module-level: a local the function no longer reads could be collected). */
const ballast: unknown[] = [];

/**
 * `TIMERS=K`: K keys re-armed like the Node controller's rechecks (each due again 30–40 s after it fired, a delay
 * that differs per key, so each a Node timer list of its own), and `TTLS=K` timers an hour away at distinct delays
 * (the event-TTL controller's): what the control plane's WorkQueue timers cost on their own.
 */
function startTimers(): void {
  const recheck = (): void => void setTimeout(recheck, 30_000 + Math.floor(Math.random() * 10_000));
  for (let k = 0; k < Number(process.env.TIMERS ?? 0); k++) setTimeout(recheck, Math.floor(Math.random() * 40_000));
  for (let k = 0; k < Number(process.env.TTLS ?? 0); k++) setTimeout(() => {}, 3_600_000 + k);
}

async function server(): Promise<void> {
  startTimers();
  for (let i = 0; i < Number(process.env.BALLAST ?? 0); i++)
    ballast.push(JSON.parse(JSON.stringify(nodeObject(i, ''))));
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-bare-'));
  const { serving } = await ensureControlPlaneFiles({ dataDir: dir, listenHost: '127.0.0.1' });
  rmSync(dir, { recursive: true, force: true });
  let requests = 0;
  let watches = 0;
  const srv = https.createServer({ cert: serving.certPem, key: serving.keyPem, ...TLS_SETTINGS }, (req, res) => {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"BOOKMARK"}\n');
      watches++;
      const bookmark = '{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"123456"}}}\n';
      const t = setInterval(() => res.write(bookmark), 30_000);
      res.on('close', () => clearInterval(t));
      return;
    }
    requests++;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        status?: { controlPlaneLastContact?: string };
      };
      if (req.method === 'PATCH')
        answer(res, 200, JSON.stringify(nodeObject(1, body.status?.controlPlaneLastContact ?? '')));
      else answer(res, 201, '{"kind":"Status","apiVersion":"v1","status":"Success","code":201}');
    });
  });
  srv.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  await new Promise<void>((r) => srv.listen({ port: 0, host: '127.0.0.1', backlog: 4096 }, r));
  const port = String((srv.address() as { port: number }).port);
  const heap = `${ballast.length} objects, heap used ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB`;
  const spawn = (args: string[]) => fork(import.meta.filename, args, { execArgv: ['--import', 'tsx'] });
  const cpu = (): number => cpuSecondsOf('self');
  if (process.env.B2B) {
    const c0 = cpu();
    await new Promise((r) => spawn(['b2b', port]).on('exit', r));
    console.log(
      `bare https: ${requests} PATCHes one after another, ${(((cpu() - c0) * 1000) / requests).toFixed(3)} ms of server CPU each`,
    );
    process.exit(0);
  }
  const kids = Array.from({ length: WORKERS }, (_, k) => spawn(['agents', port, String(k)]));
  while (watches < N) await sleep(1000);
  console.log(`bare https: N = ${N}, every watch open; ballast ${heap}`);
  await sleep(20_000);
  for (let w = 0; w < 3; w++) {
    const [c0, r0, t0, us0] = [cpu(), requests, performance.now(), process.hrtime.bigint() / 1000n];
    await sleep(30_000);
    const s = (performance.now() - t0) / 1000;
    const mem = process.memoryUsage();
    const [rss, used] = [mem.rss, mem.heapUsed].map((b) => (b / 2 ** 20).toFixed(0));
    console.log(
      `bare https: window ${w}: ${((100 * (cpu() - c0)) / s).toFixed(1)} % of a core, ${((requests - r0) / s).toFixed(0)} requests/s, RSS ${rss} MiB, heap used ${used} MiB [${us0}-${process.hrtime.bigint() / 1000n}]`,
    );
  }
  for (const k of kids) k.kill();
  process.exit(0);
}

function request(
  port: number,
  agent: https.Agent,
  method: string,
  path: string,
  body: string,
  done?: () => void,
): void {
  const headers = {
    'content-type': 'application/merge-patch+json',
    authorization: `Bearer ${'x'.repeat(43)}`,
    'content-length': Buffer.byteLength(body),
  };
  const r = https.request(
    { host: '127.0.0.1', port, method, path, agent, headers, rejectUnauthorized: false },
    (res) => {
      res.resume();
      if (done) res.on('end', done);
    },
  );
  r.on('error', () => {});
  r.end(body);
}

async function agents(port: number, worker: number): Promise<void> {
  for (let i = worker; i < N; i += WORKERS) {
    const watch = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
    const calls = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
    const path = `/api/v1alpha1/nodes/node-${i}/status`;
    const w = https.request(
      { host: '127.0.0.1', port, path: `/api/v1alpha1/declarations?watch=1&n=${i}`, agent: watch },
      (res) => res.resume(),
    );
    w.on('error', () => {});
    w.end();
    const beat = (): void => {
      request(port, calls, 'PATCH', path, JSON.stringify({ status: nodeObject(i, new Date().toISOString()).status }));
      setTimeout(beat, 10_000 * (0.9 + 0.2 * Math.random()));
    };
    setTimeout(beat, 10_000 * Math.random());
    const ship = (): void => {
      const time = new Date().toISOString();
      const entries = [1, 2].map((seq) => ({ seq, service: 'bench/app', time, line: `line ${seq} of node-${i}` }));
      request(port, calls, 'POST', `/api/v1alpha1/nodes/node-${i}/logs`, JSON.stringify({ stream: 's1', entries }));
    };
    setTimeout(() => {
      ship();
      setInterval(ship, 30_000);
    }, 30_000 * Math.random());
    if (i % 50 === worker) await sleep(20);
  }
}

async function backToBack(port: number): Promise<void> {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, rejectUnauthorized: false });
  const body = JSON.stringify({ status: nodeObject(1, new Date().toISOString()).status });
  for (let k = 0; k < 3000; k++)
    await new Promise<void>((done) => request(port, agent, 'PATCH', '/api/v1alpha1/nodes/node-1/status', body, done));
  process.exit(0);
}

// A forked client ends with the server that forked it, however that one ends.
if (mode !== 'server') process.on('disconnect', () => process.exit(0));
if (mode === 'server') await server();
else if (mode === 'agents') await agents(Number(portArg), Number(workerArg));
else if (mode === 'b2b') await backToBack(Number(portArg));
else throw new Error(`unknown mode ${JSON.stringify(mode)}: run it without arguments`);
