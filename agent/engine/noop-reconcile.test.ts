import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createEngine } from './reconciler.ts';
import { directoryDriver } from '../drivers/directory.ts';
import { fileDriver } from '../drivers/file.ts';
import { memoryInventoryStore, tempHost } from './testing.ts';
import type { DeclaredResource } from '../../api/v1alpha1/generated/declaration.ts';
import type { DriverRegistry } from './types.ts';

/** 100 directories with 9 files each: 1,000 owned resources across 100 owners. */
function declaration(): DeclaredResource[] {
  const out: DeclaredResource[] = [];
  for (let d = 0; d < 100; d++) {
    const owner = `module-${d}@v1`;
    out.push({ id: `m${d}/dir`, owner, kind: 'Directory', spec: { path: `/srv/m${d}`, mode: '0755' } });
    for (let f = 0; f < 9; f++) {
      out.push({
        id: `m${d}/f${f}`,
        owner,
        kind: 'File',
        spec: { path: `/srv/m${d}/f${f}.conf`, content: `key=${d}.${f}\n`.repeat(20), mode: '0644' },
      });
    }
  }
  return out;
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

test('engine: no-op reconcile of 1,000 owned files and directories (figure printed, not asserted)', async () => {
  const h = tempHost();
  try {
    const drivers: DriverRegistry = { Directory: directoryDriver, File: fileDriver };
    const store = memoryInventoryStore();
    const engine = createEngine({ drivers, ctx: h.ctx, loadInventory: store.load, saveInventory: store.save });
    const decl = declaration();
    const created = await engine.reconcile(decl);
    assert.equal(created.counts.Applied, 1000);
    const runs: number[] = [];
    for (let i = 0; i < 15; i++) {
      const r = await engine.reconcile(decl);
      assert.equal(
        r.steps.every((s) => s.action === 'noop'),
        true,
      );
      runs.push(r.durationMs);
    }
    const cold = createEngine({ drivers, ctx: h.ctx, loadInventory: store.load, saveInventory: store.save });
    const coldRun = await cold.reconcile(decl);
    assert.equal(
      coldRun.steps.every((s) => s.action === 'noop'),
      true,
    );
    const last = await engine.reconcile(decl);
    console.log(
      `no-op reconcile of 1,000 owned resources: median ${median(runs).toFixed(1)} ms, min ${Math.min(...runs).toFixed(1)} ms, ` +
        `max ${Math.max(...runs).toFixed(1)} ms over ${runs.length} runs (observe ${last.timings.observeMs.toFixed(1)} / plan ${last.timings.planMs.toFixed(1)} / ` +
        `apply ${last.timings.applyMs.toFixed(1)} ms); first after a cold start ${coldRun.durationMs.toFixed(1)} ms; initial create ${created.durationMs.toFixed(0)} ms`,
    );
  } finally {
    h.cleanup();
  }
});
