/**
 * The engine over the real drivers for the engine's tests (not used by production code): a temporary root, an
 * in-memory inventory store, a process supervisor with short timings, and a cleanup that stops what it started.
 */
import type { Clock } from '../../api/meta/clock.ts';
import { createDriverRegistry } from '../drivers/registry.ts';
import { createProcessSupervisor } from '../drivers/process-supervisor.ts';
import { createEngine } from './reconciler.ts';
import { memoryInventoryStore, memoryLogger, tempHost } from './testing.ts';

/** A fresh engine on a temporary root; `logger` receives the engine's lines (the supervisor's are dropped). */
export function engineSetup(clock?: Clock, logger = memoryLogger()) {
  const h = tempHost();
  const store = memoryInventoryStore();
  const supervisor = createProcessSupervisor({
    stateDir: h.stateDir,
    logger: memoryLogger(),
    backoff: { initialMs: 50 },
    stopGraceMs: 500,
    pollMs: 50,
  });
  const drivers = createDriverRegistry({ supervisor });
  const engine = createEngine({
    drivers,
    ctx: { ...h.ctx, logger },
    loadInventory: store.load,
    saveInventory: store.save,
    clock,
  });
  const pidOf = async (id: string) => (await supervisor.inspect(id))?.pid;
  const cleanup = async () => {
    await supervisor.stopAll();
    supervisor.close();
    h.cleanup();
  };
  return { h, store, supervisor, drivers, engine, pidOf, cleanup };
}
