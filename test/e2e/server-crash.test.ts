// The control-plane process is killed with SIGKILL at random moments during a stream of writes over its API,
// at least 50 times; after every restart the store must open and hold every write the API acknowledged.
// Each writer owns its objects, so for every object the test knows its last acknowledged state and the one
// request that may have been in flight when the kill landed (which may or may not have been applied).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildCli } from './cli-harness.ts';
import { httpRequest } from '../harness.ts';
import type { ClientConfig } from '../../api/client/types.ts';

const KILLS = 52;
const WRITERS = 16;
const NAMES_PER_WRITER = 4;
const EVENTS = '/apis/meshctl.dev/v1alpha1/events';
/** Writes each round has acknowledged before its kill. */
const MIN_ACKED_PER_ROUND = 11;

/** What the test knows of one object: its last acknowledged state, and the request in flight (if any). */
interface Known {
  acked: string | null;
  inFlight?: string | null;
}

function event(name: string, message: string): object {
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Event',
    metadata: { name },
    involvedObject: { apiVersion: 'meshctl.dev/v1alpha1', kind: 'Node', name: 'n' },
    type: 'Normal',
    reason: 'Crash',
    message,
  };
}

/** Starts the built control plane on a free port (plain HTTP on loopback) and waits until it serves. */
async function startControlPlane(bin: string, dataDir: string): Promise<{ child: ChildProcess; config: ClientConfig }> {
  const child = spawn(process.execPath, [bin, '--data-dir', dataDir, '--listen', '127.0.0.1:0', '--insecure-http'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const lines: string[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stderr }).on('line', (line) => {
      lines.push(line);
      if (line.includes('"msg":"Serving"')) resolve((JSON.parse(line) as { url: string }).url);
    });
    child.on('exit', (code) =>
      reject(new Error(`control plane exited (${code}) before serving:\n${lines.join('\n')}`)),
    );
  });
  const { parseMeshconfig } = await import('../../api/client/meshconfig.ts');
  const { readFileSync } = await import('node:fs');
  const config = parseMeshconfig(readFileSync(join(dataDir, 'admin.meshconfig'), 'utf8'));
  return { child, config: { ...config, server: url, timeoutMs: 5000 } };
}

/** One writer: creates, updates and deletes its own objects in turn until `stop` is set. */
async function writer(
  config: ClientConfig,
  w: number,
  known: Map<string, Known>,
  stop: { now: boolean },
  seq: { n: number; acked: number },
): Promise<void> {
  while (!stop.now) {
    const name = `w${w}-o${Math.floor(Math.random() * NAMES_PER_WRITER)}`;
    const k = known.get(name) ?? { acked: null };
    known.set(name, k);
    const message = `m${++seq.n}`;
    const del = k.acked !== null && Math.random() < 0.2;
    k.inFlight = del ? null : message;
    let res;
    try {
      res = del
        ? await httpRequest(config, 'DELETE', `${EVENTS}/${name}`)
        : k.acked === null
          ? await httpRequest(config, 'POST', EVENTS, event(name, message))
          : await httpRequest(config, 'PUT', `${EVENTS}/${name}`, event(name, message));
    } catch {
      return; // the server was killed: this request's fate is unknown (k.inFlight stays set)
    }
    assert.ok(res.status < 300, `${name}: HTTP ${res.status} ${res.text}`);
    k.acked = del ? null : message;
    delete k.inFlight;
    seq.acked++;
  }
}

/** Waits until `target` writes in all have been acknowledged (the writers keep going meanwhile). */
async function acknowledged(seq: { acked: number }, target: number): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (seq.acked < target) {
    assert.ok(Date.now() < deadline, `only ${seq.acked} of ${target} writes acknowledged after 60 s`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Checks every object against what was acknowledged; returns the state the next round starts from. */
async function verify(config: ClientConfig, known: Map<string, Known>, round: number): Promise<void> {
  const res = await httpRequest(config, 'GET', EVENTS);
  assert.equal(res.status, 200, res.text);
  const live = new Map(
    (res.json as { items: Array<{ metadata: { name: string }; message: string }> }).items.map((e) => [
      e.metadata.name,
      e.message,
    ]),
  );
  for (const [name, k] of known) {
    const now = live.get(name) ?? null;
    const allowed = 'inFlight' in k ? [k.acked, k.inFlight] : [k.acked];
    assert.ok(
      allowed.includes(now),
      `after kill ${round}: ${name} is ${now ?? 'absent'}; acknowledged ${k.acked ?? 'absent'}, in flight ${'inFlight' in k ? (k.inFlight ?? 'delete') : 'nothing'}`,
    );
    k.acked = now;
    delete k.inFlight;
  }
}

test(
  `SIGKILL the control plane ${KILLS} times during a stream of writes: every acknowledged write survives`,
  { timeout: 240_000 },
  async (t) => {
    const cli = await buildCli();
    const dataDir = mkdtempSync(join(tmpdir(), 'meshctl-crash-'));
    let current: ChildProcess | undefined;
    t.after(() => {
      if (current && current.exitCode === null && current.signalCode === null) current.kill('SIGKILL');
      rmSync(dataDir, { recursive: true, force: true });
      cli.cleanup();
    });
    const bin = join(dirname(cli.bin), 'mesh-control-plane.js');
    const known = new Map<string, Known>();
    const seq = { n: 0, acked: 0 };
    for (let round = 1; round <= KILLS; round++) {
      const { child, config } = await startControlPlane(bin, dataDir);
      current = child;
      await verify(config, known, round - 1);
      const stop = { now: false };
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(config, w, known, stop, seq));
      // Kill once this round has had writes acknowledged (a random number of them, so kills land at different
      // points of the write stream), and a random moment later: by progress, not by time, so a loaded machine
      // slows the test down rather than failing it.
      await acknowledged(seq, seq.acked + MIN_ACKED_PER_ROUND + Math.floor(Math.random() * 20));
      await new Promise((r) => setTimeout(r, Math.random() * 20));
      const exited = new Promise((r) => child.on('exit', r));
      child.kill('SIGKILL');
      await exited;
      stop.now = true;
      await Promise.all(writers);
    }
    const { child, config } = await startControlPlane(bin, dataDir);
    current = child;
    await verify(config, known, KILLS);
    child.kill('SIGTERM');
    await new Promise((r) => child.on('exit', r));
    t.diagnostic(
      `${KILLS} kills, ${seq.n} writes sent, ${seq.acked} acknowledged, ${known.size} objects checked after every restart`,
    );
    assert.ok(seq.acked >= KILLS * MIN_ACKED_PER_ROUND, 'writes were really under way when the kills landed');
  },
);
