// The shipper against the real API server (in-process, plain HTTP) that goes away and comes back on the
// same port, with a real agent store and reachability tracker; service output is appended to the log
// file the supervisor would write.
import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import { FakeClock, settle } from '../../api/meta/fake-clock.ts';
import { createApp } from '../../api/server/app.ts';
import { bearerAuthenticator, hashToken } from '../../api/server/access/auth.ts';
import { listen, type Listening } from '../../api/server/listen.ts';
import { MAX_SERVICES_PER_NODE } from '../../api/server/logs/log-files.ts';
import { openStore, type FileStore } from '../../api/store/index.ts';
import { logPath } from '../drivers/log-file.ts';
import { memoryLogger } from '../engine/testing.ts';
import { openAgentStore, type AgentStore } from '../store/agent-store.ts';
import { createReachability } from '../sync/reachability.ts';
import { metricValue, waitFor } from '../testing.ts';
import { openAgentLogs } from './agent-logs.ts';
import type { LogShipper } from './shipper.ts';

const SERVICE = 'count-on-a/counter';

interface Rig {
  stateDir: string;
  /** The agent's client (the shipper shares its transport). */
  client: HttpClient;
  /** The connections the control plane holds open now (ss). */
  serverConnections(): number;
  store: FileStore;
  agentStore: AgentStore;
  shipper: LogShipper;
  logger: ReturnType<typeof memoryLogger>;
  /** The shipper's clock: its polls and retries happen only as the test advances it. */
  clock: FakeClock;
  up(): Promise<void>;
  down(): Promise<void>;
  /** The numbers of `line N` stored by the control plane, in file order. */
  stored(): Promise<number[]>;
  write(from: number, to: number): void;
  /** Whether every line written is in the shipper's buffer: its kept read position is the log file's end. */
  buffered(): boolean;
}

async function rig(t: TestContext, bufferBytes?: number, beforeStart?: (cpLogs: string) => void): Promise<Rig> {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-shipper-'));
  beforeStart?.(join(dir, 'cp', 'logs'));
  const stateDir = join(dir, 'agent');
  mkdirSync(join(stateDir, 'logs'), { recursive: true });
  const store = await openStore({ dir: join(dir, 'cp', 'store') });
  await store.create('nodes', { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', metadata: { name: 'a' }, spec: {} });
  let server: Listening | undefined;
  let port = 0;
  const up = async (): Promise<void> => {
    const app = createApp({
      store,
      logsDir: join(dir, 'cp', 'logs'),
      authenticate: bearerAuthenticator({ adminTokenSha256: hashToken('admin') }),
    });
    server = await listen({ app, host: '127.0.0.1', port });
    port = server.port;
  };
  await up();
  const logger = memoryLogger();
  const clock = new FakeClock();
  const agentStore = await openAgentStore({ stateDir, logger });
  const reach = createReachability({ store: agentStore, logger, node: 'a', server: server!.url });
  // The agent's client: the shipper sends over its transport, as the agent's does.
  const client = createClient({ server: server!.url, token: 'admin' });
  const shipper = await openAgentLogs({
    stateDir,
    node: 'a',
    transport: client.transport,
    store: agentStore,
    reach,
    logger,
    flushOutbox: () => {},
    clock,
    ...(bufferBytes ? { bufferBytes } : {}),
  });
  t.after(async () => {
    client.close();
    await shipper.stop();
    reach.close();
    await agentStore.close();
    await server?.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });
  return {
    stateDir,
    client,
    serverConnections: () =>
      execFileSync('ss', ['-tnH', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' })
        .split('\n')
        .filter(Boolean).length,
    store,
    agentStore,
    shipper,
    logger,
    clock,
    up,
    down: async () => {
      await server?.close();
      server = undefined;
    },
    stored: async () => {
      const res = await fetch(
        `${server!.url}/apis/meshctl.dev/v1alpha1/nodes/a/logs?service=${encodeURIComponent(SERVICE)}`,
        { headers: { authorization: 'Bearer admin' } },
      );
      if (res.status === 404) return [];
      return (await res.text())
        .split('\n')
        .flatMap((l) => (/^line (\d+)/.exec(l) ? [Number(/^line (\d+)/.exec(l)![1])] : []));
    },
    write: (from, to) => {
      for (let n = from; n <= to; n++) appendFileSync(logPath(stateDir, SERVICE), `line ${n} ${'.'.repeat(60)}\n`);
    },
    buffered: () => {
      let positions: Record<string, { offset: number } | undefined>;
      try {
        positions = JSON.parse(
          readFileSync(join(stateDir, 'log-shipper', 'positions.json'), 'utf8'),
        ) as typeof positions;
      } catch {
        return false;
      }
      return positions[SERVICE]?.offset === statSync(logPath(stateDir, SERVICE)).size;
    },
  };
}

const upTo = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);

/** Lets `ms` pass on the shipper's clock, one poll interval at a time, with its I/O in between. */
async function pass(clock: FakeClock, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 250) {
    clock.advance(Math.min(250, ms - t));
    await settle();
  }
}

/** Drives the shipper's clock (a poll interval per try) until `cond` holds; its HTTP calls take real time. */
function until<T>(
  r: Rig,
  cond: () => T | undefined | false | Promise<T | undefined | false>,
  ms: number,
  what: string,
): Promise<T> {
  return waitFor(
    async () => {
      await pass(r.clock, 250);
      return cond();
    },
    ms,
    what,
  );
}

test('lines reach the control plane in order; while it is away they wait on disk, and arrive after it, without gaps or repeats', async (t) => {
  const r = await rig(t);
  r.shipper.start();
  r.write(1, 20);
  await until(r, async () => (await r.stored()).length === 20, 5000, 'the first lines');
  await r.down();
  r.write(21, 60);
  await until(
    r,
    () => r.logger.lines.some((l) => l.msg === 'Lost contact with control plane'),
    5000,
    'the shipper to notice the outage',
  );
  await pass(r.clock, 500);
  await r.up();
  await until(r, async () => (await r.stored()).length >= 60, 10_000, 'the lines written during the outage');
  r.write(61, 70);
  await until(r, async () => (await r.stored()).length >= 70, 5000, 'lines after the outage');
  assert.deepEqual(await r.stored(), upTo(70));
  assert.ok(r.logger.lines.some((l) => l.msg === 'Reconnected to control plane'));
});

test("log POSTs share the agent client's kept-alive connection: the control plane holds one connection for both", async (t) => {
  const r = await rig(t);
  await r.client.get('nodes', 'a');
  r.shipper.start();
  r.write(1, 5);
  await until(r, () => metricValue(r.shipper.metrics(), 'meshagent_log_shipped_lines_total') === 5, 5000, 'shipped');
  await r.client.get('nodes', 'a');
  assert.equal(r.serverConnections(), 1, 'one connection for the client and the shipper');
  assert.deepEqual(await r.stored(), upTo(5));
});

test('a tiny buffer during an outage drops the oldest lines, counts them, and reports them once delivered', async (t) => {
  const r = await rig(t, 2048);
  r.shipper.start();
  r.write(1, 5);
  await until(r, async () => (await r.stored()).length === 5, 5000, 'the first lines');
  await r.down();
  for (let n = 6; n <= 100; n += 5) {
    r.write(n, n + 4);
    await pass(r.clock, 250);
  }
  // The tailer reads on the fake clock but with real I/O, so under load it lags the writes: without this wait,
  // lines read after the control plane is back make a second gap (or push out a batch being sent).
  await until(r, () => r.buffered(), 5000, 'every line read into the buffer');
  await until(r, () => metricValue(r.shipper.metrics(), 'meshagent_log_dropped_lines_total')! > 0, 5000, 'drops');
  await pass(r.clock, 300);
  await r.up();
  await until(r, async () => (await r.stored()).at(-1) === 100, 10_000, 'the newest line');
  const stored = await r.stored();
  const dropped = metricValue(r.shipper.metrics(), 'meshagent_log_dropped_lines_total')!;
  const gapStart = stored.findIndex((n, i) => n !== i + 1);
  assert.ok(gapStart > 0, `there is a gap: ${stored.join(',')}`);
  assert.deepEqual(
    stored.slice(gapStart),
    Array.from({ length: 100 - stored[gapStart] + 1 }, (_, i) => stored[gapStart] + i),
    'after the gap: contiguous to the newest',
  );
  assert.equal(stored[gapStart] - gapStart - 1, dropped, 'exactly the dropped lines are missing');
  const missing = Array.from({ length: dropped }, (_, i) => gapStart + 1 + i);
  const bytes = missing.reduce((sum, n) => sum + Buffer.byteLength(`line ${n} ${'.'.repeat(60)}\n`), 0);
  assert.equal(
    metricValue(r.shipper.metrics(), 'meshagent_log_dropped_bytes_total'),
    bytes,
    'the bytes of exactly those lines',
  );
  await until(r, () => r.agentStore.outbox().find((o) => o.reason === 'LogsDropped'), 5000, 'the LogsDropped event');
  const event = r.agentStore.outbox().find((o) => o.reason === 'LogsDropped')!;
  assert.equal(event.type, 'Warning');
  assert.deepEqual(event.involvedObject, { kind: 'Node', name: 'a' });
  assert.match(
    event.message,
    new RegExp(`^dropped ${dropped} log lines .*log buffer \\(2 KiB\\).*${SERVICE}: ${dropped} lines`),
  );
});

test('a batch the control plane refuses (403: the node is at its quota of services with logs) is dropped, not retried forever', async (t) => {
  // The control plane already keeps logs of as many services of node a as it allows: this service is one too many.
  const r = await rig(t, undefined, (cpLogs) => {
    mkdirSync(join(cpLogs, 'a'), { recursive: true });
    for (let i = 0; i < MAX_SERVICES_PER_NODE; i++) writeFileSync(join(cpLogs, 'a', `other-${i}.log`), '');
  });
  r.shipper.start();
  r.write(1, 5);
  await until(
    r,
    () => r.logger.lines.some((l) => l.msg === 'Dropped log lines the control plane refused'),
    5000,
    'the refusal',
  );
  r.write(6, 8);
  await until(
    r,
    () => r.logger.lines.filter((l) => l.msg === 'Dropped log lines the control plane refused').length >= 2,
    5000,
    'the next lines to be tried, and refused, too',
  );
  assert.deepEqual(await r.stored(), []);
});
