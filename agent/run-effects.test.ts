import { test } from 'node:test';
import assert from 'node:assert/strict';
import { degradedReason } from './run-effects.ts';

const at = { at: '2026-01-01T00:00:00.000Z', startedAt: '2026-01-01T00:00:00.000Z', durationMs: 1 };

test('healthz reason: none after a reconcile that applied everything, or before any; why otherwise', () => {
  assert.equal(degradedReason(undefined), undefined);
  assert.equal(degradedReason({ ...at, outcome: 'success', resources: 3, notApplied: [] }), undefined);
  assert.equal(
    degradedReason({ ...at, outcome: 'error', error: 'agent store: cannot read state/store.json' }),
    'the last reconcile failed: agent store: cannot read state/store.json',
  );
  const notApplied = Array.from({ length: 12 }, (_, i) => `m/r${i} Failed`);
  assert.equal(
    degradedReason({ ...at, outcome: 'failure', resources: 20, notApplied }),
    `the last reconcile did not apply 12 of 20 resources: ${notApplied.slice(0, 10).join(', ')}, and 2 more`,
  );
});
