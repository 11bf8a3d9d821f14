/**
 * The engine the agent holds: `reconcile(resources)` observes the world, plans against the owned
 * inventory and applies, one reconcile at a time; `plan(resources)` is the same without applying
 * (dry-run). The inventory is loaded once from the caller's store and every change to it is handed to
 * `saveInventory`, which must be durable before it resolves. Failed resources back off per resource
 * (retry.ts) until `retryNow()`.
 */
import { performance } from 'node:perf_hooks';
import { applyPlan } from './apply.ts';
import { createInventory, type Inventory, type InventoryChange } from './inventory.ts';
import { observeAll } from './observe.ts';
import { plan } from './plan.ts';
import { createRetryTracker, type RetryOptions } from './retry.ts';
import { realClock, type Clock } from '../../api/meta/clock.ts';
import { createSerial } from '../../api/meta/serial.ts';
import type { DeclaredResource } from '../../api/v1alpha1/generated/declaration.ts';
import type { DriverContext, DriverRegistry, InventoryEntry, ResourceResult, ResultState, Step } from './types.ts';

export type { InventoryChange } from './inventory.ts';

/** Options of `createEngine`. */
export interface EngineOptions {
  drivers: DriverRegistry;
  ctx: DriverContext;
  /** Reads the owned inventory (creation order). Must throw on a corrupt store, never return []. */
  loadInventory(): Promise<readonly InventoryEntry[]>;
  /** Persists the inventory after `change`; `entries` is the whole inventory after it. Durable on resolve. */
  saveInventory(entries: readonly InventoryEntry[], change: InventoryChange): Promise<void>;
  clock?: Clock;
  retry?: RetryOptions;
  /** Observations in flight at once. Default 64. */
  observeConcurrency?: number;
}

/** The outcome of one reconcile, with its timing (for the agent's metrics). */
export interface ReconcileResult {
  results: ResourceResult[];
  steps: Step[];
  startedAt: string;
  durationMs: number;
  timings: { observeMs: number; planMs: number; applyMs: number };
  counts: Partial<Record<ResultState, number>>;
  /** Owned resources after the reconcile. */
  owned: number;
}

/** The host-applying engine. */
export interface Engine {
  /** Observes and plans without changing anything (dry-run). */
  plan(resources: readonly DeclaredResource[]): Promise<Step[]>;
  /** Observes, plans and applies; reconciles never overlap (a second call waits for the first). */
  reconcile(resources: readonly DeclaredResource[]): Promise<ReconcileResult>;
  /** The owned inventory, in creation order. */
  inventory(): Promise<readonly InventoryEntry[]>;
  /** Forgets the backoff of every failed resource: the next reconcile attempts them all. */
  retryNow(): void;
}

/** Creates the engine (see the module comment). */
export function createEngine(opts: EngineOptions): Engine {
  const clock = opts.clock ?? opts.ctx.clock ?? realClock;
  const ctx: DriverContext = { ...opts.ctx, clock };
  const retry = createRetryTracker({ clock, ...opts.retry });
  let inv: Inventory | undefined;
  const serial = createSerial();
  const load = async (): Promise<Inventory> => (inv ??= createInventory(await opts.loadInventory()));
  const observe = (resources: readonly DeclaredResource[], inventory: Inventory) =>
    observeAll({ resources, drivers: opts.drivers, ctx, inventory, concurrency: opts.observeConcurrency });

  async function reconcile(resources: readonly DeclaredResource[]): Promise<ReconcileResult> {
    const t0 = performance.now();
    const startedAt = new Date(clock.now()).toISOString();
    const inventory = await load();
    const observed = await observe(resources, inventory);
    const t1 = performance.now();
    const steps = plan({ desired: resources, inventory: inventory.list(), observed, drivers: opts.drivers });
    const t2 = performance.now();
    const save = (change: InventoryChange): Promise<void> => opts.saveInventory(inventory.list(), change);
    const results = await applyPlan({
      steps,
      desired: resources,
      drivers: opts.drivers,
      ctx,
      observed,
      retry,
      inventory: {
        get: (id) => inventory.get(id),
        put: (entry, replaces) => save(inventory.put(entry, replaces)),
        delete: (id) => save(inventory.delete(id)),
      },
    });
    const t3 = performance.now();
    const counts: Partial<Record<ResultState, number>> = {};
    for (const r of results) counts[r.state] = (counts[r.state] ?? 0) + 1;
    return {
      results,
      steps,
      startedAt,
      durationMs: t3 - t0,
      counts,
      owned: inventory.list().length,
      timings: { observeMs: t1 - t0, planMs: t2 - t1, applyMs: t3 - t2 },
    };
  }

  return {
    plan: (resources) =>
      serial(async () => {
        const inventory = await load();
        const observed = await observe(resources, inventory);
        return plan({ desired: resources, inventory: inventory.list(), observed, drivers: opts.drivers });
      }),
    reconcile: (resources) => serial(() => reconcile(resources)),
    inventory: () => serial(async () => (await load()).list()),
    retryNow: () => retry.reset(),
  };
}
