/**
 * Observes every declared resource through its driver, in parallel with a bounded number in flight,
 * handing each driver its last recorded observation (for fast paths). A resource that cannot be
 * observed gets `{ exists: false, error }`, which the plan turns into a failing step.
 */
import type { DeclaredResource } from '../../api/v1alpha1/generated/declaration.ts';
import { WaitingError, type DriverContext, type DriverRegistry, type InventoryEntry, type Observed } from './types.ts';

/** What `observeAll` reads. */
export interface ObserveInput {
  resources: readonly DeclaredResource[];
  drivers: DriverRegistry;
  ctx: DriverContext;
  inventory: { get(id: string): InventoryEntry | undefined };
  /** Observations in flight at once. Default 64. */
  concurrency?: number;
}

/** Observes all `resources`; the map holds one observation per id. */
export async function observeAll(input: ObserveInput): Promise<Map<string, Observed>> {
  const { resources } = input;
  const out = new Map<string, Observed>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < resources.length) {
      const r = resources[next++];
      out.set(r.id, await observeOne(input, r));
    }
  };
  await Promise.all(Array.from({ length: Math.min(input.concurrency ?? 64, resources.length) }, worker));
  return out;
}

async function observeOne(input: ObserveInput, r: DeclaredResource): Promise<Observed> {
  const driver = input.drivers[r.kind];
  if (!driver) return { exists: false, error: `no driver for kind ${r.kind}` };
  const e = input.inventory.get(r.id);
  const last = e && e.kind === r.kind && !e.pending ? e.observed : undefined;
  try {
    return await driver.observe(r.spec, { ...input.ctx, id: r.id, owner: r.owner }, last);
  } catch (err) {
    const error = err instanceof Error ? err.message : String(err);
    return err instanceof WaitingError ? { exists: false, error, waiting: true } : { exists: false, error };
  }
}
