// The acknowledgement of a new Declaration generation is deferred (ACK_DEFER_MS) and dropped when the apply's own
// report goes first: a generation applied quickly costs one status write, which acknowledges it too; one still
// being applied when the deferral ends is acknowledged then. Real server and agent store; the deferral runs on
// the fake clock.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from '../../api/client/http-client.ts';
import type { Client } from '../../api/client/types.ts';
import { FakeClock, settle } from '../../api/meta/fake-clock.ts';
import { silentLogger } from '../../api/meta/logger.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import { startServer } from '../../test/harness.ts';
import { openAgentStore } from '../store/agent-store.ts';
import { putDeclaration } from '../testing.ts';
import type { RunSummary } from './declaration-status.ts';
import type { Reachability } from './reachability.ts';
import { ACK_DEFER_MS, createReporter } from './reporter.ts';

/** A control plane that always answers (the reporter's writes are what is tested). */
const reachable: Reachability = {
  succeeded() {},
  failed: () => false,
  reachable: () => true,
  unreachableSince: () => undefined,
  lastContact: () => undefined,
  lastAnswered: () => undefined,
  unreachableSeconds: () => 0,
  onReturn() {},
  close() {},
};

async function setup(t: { after(fn: () => Promise<void>): void }) {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-reporter-'));
  const server = await startServer({ insecure: true });
  const admin = createClient(server.config);
  const store = await openAgentStore({ stateDir: dir, logger: silentLogger });
  t.after(async () => {
    await store.close();
    admin.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const file = { id: 'm/conf', owner: 'm', kind: 'File' as const, spec: { path: '/srv/m', content: 'x\n' } };
  const decl = await putDeclaration(admin, 'a', 7, [file]);
  let patches = 0;
  const client: Client = { ...admin, patch: (p, n, body, o) => (patches++, admin.patch(p, n, body, o)) };
  let run: RunSummary | undefined;
  let applied: number | undefined;
  const clock = new FakeClock();
  const reporter = createReporter({
    client,
    node: 'a',
    store,
    reach: reachable,
    logger: silentLogger,
    agentVersion: 'test',
    clock,
    state: { declaration: () => decl, run: () => run, appliedGeneration: () => applied },
  });
  const apply = (d: Declaration): void => {
    const results = [
      { id: 'm/conf', kind: 'File' as const, owner: 'm', action: 'noop' as const, state: 'Applied' as const },
    ];
    run = { uid: d.metadata.uid, generation: d.metadata.generation ?? 0, results, at: new Date().toISOString() };
    applied = d.spec.generation;
  };
  const status = async () => (await admin.get('declarations', 'a')).status;
  return { admin, decl, reporter, clock, apply, status, patches: () => patches };
}

test('a generation applied before the deferral ends is acknowledged and reported in one status write', async (t) => {
  const s = await setup(t);
  await s.reporter.reportDeclaration(false, ACK_DEFER_MS);
  assert.equal(s.patches(), 0, 'the acknowledgement waits');
  s.apply(s.decl);
  await s.reporter.reportDeclaration();
  assert.equal(s.patches(), 1);
  const st = await s.status();
  assert.equal(st?.receivedGeneration, 7, 'the one write acknowledges the generation');
  assert.equal(st?.appliedGeneration, 7);
  s.clock.advance(ACK_DEFER_MS * 2);
  await settle();
  await s.reporter.idle();
  assert.equal(s.patches(), 1, 'the deferred acknowledgement was dropped');
});

test('a generation still being applied when the deferral ends is acknowledged then', async (t) => {
  const s = await setup(t);
  await s.reporter.reportDeclaration(false, ACK_DEFER_MS);
  s.clock.advance(ACK_DEFER_MS - 1);
  await settle();
  assert.equal(s.patches(), 0, 'not before the deferral ends');
  s.clock.advance(1);
  await settle();
  await s.reporter.idle();
  assert.equal(s.patches(), 1);
  const st = await s.status();
  assert.equal(st?.receivedGeneration, 7);
  assert.equal(st?.appliedGeneration, undefined);
  assert.deepEqual(st?.results, [{ id: 'm/conf', state: 'Pending' }]);
  s.apply(s.decl);
  await s.reporter.reportDeclaration();
  assert.equal((await s.status())?.appliedGeneration, 7);
  assert.equal(s.patches(), 2);
});

test('stopping sends an acknowledgement still deferred', async (t) => {
  const s = await setup(t);
  await s.reporter.reportDeclaration(false, ACK_DEFER_MS);
  await s.reporter.idle();
  assert.equal(s.patches(), 1);
  assert.equal((await s.status())?.receivedGeneration, 7);
});

test("the control plane's copy of the status decides whether it is written again: not when it holds the last write, at once when it lost it", async (t) => {
  const s = await setup(t);
  s.apply(s.decl);
  await s.reporter.reportDeclaration();
  assert.equal(s.patches(), 1);
  const held = await s.admin.get('declarations', 'a');
  // A restarted control plane kept it: the list shows the status last written, and nothing is sent.
  await s.reporter.compareStored(held);
  await s.reporter.reportDeclaration();
  assert.equal(s.patches(), 1, 'no status write when the control plane holds the last one');
  // A restore lost it (the same Declaration, its status older): written again, in full.
  const restored = { ...held, status: { observedGeneration: 1, receivedGeneration: 6 } };
  await s.reporter.compareStored(restored);
  assert.equal(s.patches(), 2, 'the status is written again');
  assert.equal((await s.status())?.appliedGeneration, 7);
  // Another Declaration (a new uid) is not compared: its own report follows its arrival.
  await s.reporter.compareStored({ ...held, metadata: { ...held.metadata, uid: 'other' }, status: {} });
  assert.equal(s.patches(), 2);
});
