import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../api/store/index.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import { memoryLogger } from '../engine/testing.ts';
import type { InventoryEntry } from '../engine/types.ts';
import { openAgentStore } from './agent-store.ts';
import { PLURAL } from './records.ts';
import { watermarkPath } from './watermark.ts';

function tempState(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-agent-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const decl = (generation: number): Declaration => ({
  apiVersion: 'meshctl.dev/v1alpha1',
  kind: 'Declaration',
  metadata: { name: 'a', uid: 'u1', generation },
  spec: { generation, resources: [{ id: 'x/dir', owner: 'x', kind: 'Directory', spec: { path: '/x' } }] },
});
const entry = (id: string, path = `/${id}`): InventoryEntry => ({
  id,
  kind: 'Directory',
  owner: 'x',
  spec: { path },
  appliedAt: '2026-01-01T00:00:00Z',
});
const open = (stateDir: string) => openAgentStore({ stateDir, logger: memoryLogger(), outboxLimit: 3 });
const journal = (stateDir: string): string => {
  const dir = join(stateDir, 'store');
  return join(
    dir,
    readdirSync(dir)
      .filter((f) => f.startsWith('journal-'))
      .sort()
      .at(-1)!,
  );
};

test('agent store: everything written is there after a reopen; inventory keeps creation order, not name order', async (t) => {
  const stateDir = tempState(t);
  const s = await open(stateDir);
  await s.saveIdentity({ nodeName: 'a', root: '/r', server: 'https://cp:6443', token: 't' });
  await s.saveDeclaration(decl(3));
  for (const id of ['z', 'b', 'm']) await s.applyInventoryChange({ put: entry(id) });
  await s.applyInventoryChange({ put: { ...entry('b'), owner: 'y' } });
  await s.applyInventoryChange({ delete: 'z' });
  await s.applyInventoryChange({ put: entry('a') });
  await s.updateConnection({ unreachableSince: '2026-01-01T00:00:00Z', lastContact: '2025-12-31T23:59:00Z' });
  await s.updateConnection({ appliedGeneration: 3 });
  await s.updateConnection({ unreachableSince: undefined });
  for (const reason of ['A', 'B', 'C', 'D', 'E']) {
    await s.enqueue({
      type: 'Normal',
      reason,
      message: reason,
      involvedObject: { kind: 'Node', name: 'a' },
      time: '2026-01-01T00:00:00Z',
    });
  }
  await s.close();

  const again = await open(stateDir);
  t.after(() => again.close());
  assert.equal(again.identity()?.server, 'https://cp:6443');
  assert.deepEqual(again.declaration()?.object, decl(3), 'the declaration is kept verbatim');
  assert.deepEqual(
    again.inventory().map((e) => [e.id, e.owner]),
    [
      ['b', 'y'],
      ['m', 'x'],
      ['a', 'x'],
    ],
  );
  assert.deepEqual(again.connection(), { lastContact: '2025-12-31T23:59:00Z', appliedGeneration: 3 });
  assert.deepEqual(
    again.outbox().map((i) => i.reason),
    ['C', 'D', 'E'],
    'the outbox is bounded: the oldest were dropped',
  );
  const w = JSON.parse(readFileSync(watermarkPath(stateDir), 'utf8')) as {
    resourceVersion: number;
    declarationGeneration: number;
  };
  assert.ok(w.resourceVersion > 10);
  assert.equal(w.declarationGeneration, 3);
});

test("agent store: a take-over keeps the old entry's place, and one interrupted by a crash is finished on open", async (t) => {
  const stateDir = tempState(t);
  const s = await open(stateDir);
  await s.saveDeclaration(decl(1));
  for (const id of ['first', 'old', 'last']) await s.applyInventoryChange({ put: entry(id) });
  await s.applyInventoryChange({ put: entry('new', '/old'), replaces: 'old' });
  assert.deepEqual(
    s.inventory().map((e) => e.id),
    ['first', 'new', 'last'],
  );
  await s.close();

  // A crash between the two writes of a take-over: the replacing record exists and so does the old one.
  const raw = await openStore({ dir: join(stateDir, 'store') });
  const last = raw.get('inventory', 'last')!;
  await raw.create('inventory', {
    apiVersion: last.apiVersion,
    kind: last.kind,
    metadata: { name: 'newer' },
    spec: { seq: 3, entry: entry('newer', '/last'), replaces: 'last' },
  });
  await raw.close();
  const logger = memoryLogger();
  const reopened = await openAgentStore({ stateDir, logger });
  t.after(() => reopened.close());
  assert.deepEqual(
    reopened.inventory().map((e) => e.id),
    ['first', 'new', 'newer'],
  );
  assert.ok(logger.lines.some((l) => l.msg === 'Finished interrupted inventory take-over'));
});

test('agent store: a corrupt journal fails the open with an error naming the file', async (t) => {
  const stateDir = tempState(t);
  const s = await open(stateDir);
  await s.saveDeclaration(decl(1));
  await s.applyInventoryChange({ put: entry('a') });
  await s.applyInventoryChange({ put: entry('b') });
  await s.close();
  const file = journal(stateDir);
  const lines = readFileSync(file, 'utf8').split('\n');
  lines[1] = '{"rv":2,"op":"put" garbage';
  writeFileSync(file, lines.join('\n'));
  await assert.rejects(
    open(stateDir),
    (e: Error) => e.message.includes(file) && /corrupt store journal/.test(e.message),
  );
});

test('agent store: a truncated store is refused (below its watermark), never opened as less than it held', async (t) => {
  for (const cut of ['to zero', 'at a line boundary', 'mid-line'] as const) {
    const stateDir = tempState(t);
    const s = await open(stateDir);
    await s.saveDeclaration(decl(1));
    for (const id of ['a', 'b', 'c']) await s.applyInventoryChange({ put: entry(id) });
    await s.close();
    const file = journal(stateDir);
    const text = readFileSync(file, 'utf8');
    const firstLine = text.indexOf('\n') + 1;
    truncateSync(file, cut === 'to zero' ? 0 : cut === 'at a line boundary' ? firstLine : firstLine + 10);
    await assert.rejects(
      open(stateDir),
      (e: Error) => /truncated or was rolled back/.test(e.message) && e.message.includes(watermarkPath(stateDir)),
      cut,
    );
  }
});

test('agent store: owned resources without a declaration, or a damaged record, refuse the start', async (t) => {
  const stateDir = tempState(t);
  const raw = await openStore({ dir: join(stateDir, 'store') });
  await raw.create('inventory', {
    apiVersion: 'agent.meshctl.dev/v1',
    kind: 'OwnedResource',
    metadata: { name: 'a' },
    spec: { seq: 1, entry: entry('a') },
  });
  await raw.close();
  await assert.rejects(open(stateDir), /lists 1 owned resource\(s\) but no declaration/);

  const other = tempState(t);
  const raw2 = await openStore({ dir: join(other, 'store') });
  await raw2.create(PLURAL.declarations, {
    apiVersion: 'agent.meshctl.dev/v1',
    kind: 'ReceivedDeclaration',
    metadata: { name: 'current' },
    spec: { object: { kind: 'Declaration' } },
  });
  await raw2.close();
  await assert.rejects(open(other), /stored declaration is damaged/);
});

test('agent store: one owner at a time (the lock)', async (t) => {
  const stateDir = tempState(t);
  const s = await open(stateDir);
  t.after(() => s.close());
  await assert.rejects(open(stateDir), /locked by this process/);
});

test("agent store: a failed compaction is logged through the agent's logger, and writes go on", async (t) => {
  const stateDir = tempState(t);
  const logger = memoryLogger();
  const s = await openAgentStore({ stateDir, logger });
  t.after(() => s.close());
  assert.ok(logger.lines.some((l) => l.msg === 'Opened store' && l.fields?.component === 'agent-store'));
  // The snapshot's temporary file cannot be created: a directory stands in its way.
  mkdirSync(join(stateDir, 'store', 'snapshot.jsonl.tmp'));
  const big = 'x'.repeat(1024 * 1024);
  for (let i = 0; i < 5; i++) await s.updateConnection({ lastContact: `${i}${big}` });
  await waitFor(() => logger.lines.some((l) => l.msg === 'Compaction failed'));
  const failed = logger.lines.find((l) => l.msg === 'Compaction failed')!;
  assert.equal(failed.level, 'error');
  assert.match(String(failed.fields?.error), /snapshot\.jsonl\.tmp/);
  await s.updateConnection({ appliedGeneration: 1 });
  assert.equal(s.connection().appliedGeneration, 1);
});

/** Polls `done` every 10 ms for up to 5 s (the compaction runs off the write path). */
async function waitFor(done: () => boolean): Promise<void> {
  for (const deadline = Date.now() + 5000; !done(); await new Promise((r) => setTimeout(r, 10))) {
    if (Date.now() > deadline) throw new Error('timed out');
  }
}
