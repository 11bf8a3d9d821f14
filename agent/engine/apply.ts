/**
 * Executes a plan in order. Ownership is recorded through the inventory hooks, which must persist
 * durably before they resolve: an intent before anything is created (so a crash cannot leave an
 * object the agent made but does not own), the applied entry after each create/update, the deletion
 * after each removal.
 *
 * Dependency rule: a declared resource depends on the resources its `dependsOn` names (declared
 * earlier; the plan fails a step whose dependency is not). When one of them does not reach its state
 * (Failed, Conflict, or itself DependencyFailed), it is not attempted and reports DependencyFailed,
 * naming that dependency; resources that do not depend on it go on, whatever their owner. A resource whose
 * driver says it waits for an input from outside the agent (WaitingError: a certificate not issued yet) reports
 * Waiting, logged at info and not backed off, and so do the resources that depend on it. Removals run
 * in reverse creation order; the inventory does not record dependencies, so among themselves they keep
 * a conservative rule: a failed removal keeps the earlier-created objects of its owner (e.g. the
 * directory a still-running service uses). The removal of a moved resource's old object depends on the
 * new one having been applied.
 */
import type { DeclaredResource } from '../../api/v1alpha1/generated/declaration.ts';
import type { RetryTracker } from './retry.ts';
import {
  WaitingError,
  type Driver,
  type DriverContext,
  type DriverRegistry,
  type InventoryEntry,
  type Observed,
  type ResourceResult,
  type ResultState,
  type Step,
} from './types.ts';

/** Access to the inventory: reads, and writes that resolve once durable. */
export interface InventoryHooks {
  get(id: string): InventoryEntry | undefined;
  put(entry: InventoryEntry, replaces?: string): Promise<void>;
  delete(id: string): Promise<void>;
}

/** What `applyPlan` needs. `observed` is what the plan was made from. */
export interface ApplyInput {
  steps: readonly Step[];
  desired: readonly DeclaredResource[];
  drivers: DriverRegistry;
  ctx: DriverContext;
  observed: ReadonlyMap<string, Observed>;
  inventory: InventoryHooks;
  /** Per-resource backoff: a resource waiting out its delay is reported Failed without being attempted. */
  retry?: RetryTracker;
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));
const now = (ctx: DriverContext): string => new Date(ctx.clock?.now() ?? Date.now()).toISOString();

/** Who blocks whom while a plan runs. */
interface Blocks {
  /** Declared id → the state it reached, for those that did not reach Applied. */
  notApplied: Map<string, ResultState>;
  /** Owner → the first removal of it that failed. */
  removals: Map<string, string>;
}

type Report = (state: ResultState, msg?: string) => ResourceResult;

/** Applies `steps` in order and returns one result per step (see the module comment for the rules). */
export async function applyPlan(input: ApplyInput): Promise<ResourceResult[]> {
  const desired = new Map(input.desired.map((r) => [r.id, r]));
  const blocks: Blocks = { notApplied: new Map(), removals: new Map() };
  const results: ResourceResult[] = [];
  for (const step of input.steps) {
    const report: Report = (state, msg) => ({
      id: step.id,
      kind: step.kind,
      owner: step.owner,
      action: step.action,
      state,
      ...(msg !== undefined ? { message: msg } : {}),
    });
    if (step.action === 'remove') {
      results.push(await removal(input, step, blocks, report));
      continue;
    }
    const result = await declared(input, desired, step, blocks, report);
    if (result.state !== 'Applied') blocks.notApplied.set(step.id, result.state);
    results.push(result);
  }
  return results;
}

async function declared(
  input: ApplyInput,
  desired: Map<string, DeclaredResource>,
  step: Step,
  blocks: Blocks,
  report: Report,
): Promise<ResourceResult> {
  const blocker = step.dependsOn?.find((d) => blocks.notApplied.has(d));
  if (blocker !== undefined && blocks.notApplied.get(blocker) === 'Waiting')
    return report('Waiting', `not attempted: it depends on ${blocker}, which is Waiting`);
  if (blocker !== undefined) {
    return report(
      'DependencyFailed',
      `not attempted: it depends on ${blocker}, which is ${blocks.notApplied.get(blocker)}`,
    );
  }
  if (step.action === 'noop') {
    input.retry?.succeeded(step.id);
    return report('Applied');
  }
  if (step.action === 'conflict') return report('Conflict', step.message);
  return attempt(input, step, step.id, () => applyOne(input, desired, step), report);
}

async function removal(input: ApplyInput, step: Step, blocks: Blocks, report: Report): Promise<ResourceResult> {
  const blocker = blocks.removals.get(step.owner);
  if (blocker !== undefined) return report('DependencyFailed', `not removed: removal of ${blocker} failed`);
  if (step.superseded && blocks.notApplied.has(step.id))
    return report('DependencyFailed', 'not removed: its replacement was not applied');
  return attempt(
    input,
    step,
    `remove:${step.id}`,
    () => removeOne(input, step),
    report,
    () => blocks.removals.set(step.owner, step.id),
  );
}

async function attempt(
  input: ApplyInput,
  step: Step,
  retryKey: string,
  run: () => Promise<ResultState | [ResultState, string]>,
  report: Report,
  onFail?: () => void,
): Promise<ResourceResult> {
  const waiting = input.retry?.waiting(retryKey);
  if (waiting !== undefined) {
    onFail?.();
    return report('Failed', waiting);
  }
  try {
    const out = await run();
    input.retry?.succeeded(retryKey);
    return typeof out === 'string' ? report(out) : report(...out);
  } catch (e) {
    if (e instanceof WaitingError) {
      input.retry?.succeeded(retryKey);
      input.ctx.logger.info(`Waiting to ${step.action} ${step.kind}`, {
        id: step.id,
        owner: step.owner,
        reason: e.message,
      });
      return report('Waiting', e.message);
    }
    input.retry?.failed(retryKey, message(e));
    onFail?.();
    input.ctx.logger.error(`Failed to ${step.action} ${step.kind}`, {
      id: step.id,
      owner: step.owner,
      error: message(e),
    });
    return report('Failed', message(e));
  }
}

function driverFor(input: ApplyInput, step: Step): Driver {
  const driver = input.drivers[step.kind];
  if (step.error !== undefined) throw step.waiting ? new WaitingError(step.error) : new Error(step.error);
  if (!driver) throw new Error(`no driver for kind ${step.kind}`);
  return driver;
}

async function applyOne(input: ApplyInput, desired: Map<string, DeclaredResource>, step: Step): Promise<ResultState> {
  const { inventory, ctx } = input;
  const r = desired.get(step.id);
  if (!r) throw new Error(`resource ${step.id} is not in the declaration`);
  const driver = driverFor(input, step);
  const rctx = { ...ctx, id: r.id, owner: r.owner };
  const own = inventory.get(r.id);
  const current = own ?? (step.replaces !== undefined ? inventory.get(step.replaces) : undefined);
  const superseded = [...(current?.superseded ?? [])];
  const moved = own !== undefined && driver.key(own.spec, r.id) !== driver.key(r.spec, r.id);
  if (moved) superseded.push(own.spec);
  const entry = (extra: Partial<InventoryEntry>): InventoryEntry => ({
    id: r.id,
    kind: r.kind,
    owner: r.owner,
    spec: r.spec,
    appliedAt: now(ctx),
    ...(superseded.length ? { superseded } : {}),
    ...extra,
  });
  if (!own || step.replaces !== undefined || moved) await inventory.put(entry({ pending: true }), step.replaces);
  try {
    await driver.apply(r.spec, rctx, input.observed.get(r.id) ?? { exists: false });
  } catch (e) {
    if (!own && step.replaces === undefined) await forgetIfAbsent(input, driver, r);
    throw e;
  }
  const after = await driver.observe(r.spec, rctx);
  const left = driver.diff(r.spec, after);
  if (left.length) throw new Error(`not in the declared state after apply: ${left.map((c) => c.message).join('; ')}`);
  await inventory.put(entry({ observed: after }));
  ctx.logger.info(`Applied ${r.kind}`, {
    id: r.id,
    owner: r.owner,
    action: step.action,
    changes: step.changes?.map((c) => c.message),
  });
  return 'Applied';
}

/** After a failed create: drop the intent when nothing was created, so the path is never claimed later. */
async function forgetIfAbsent(input: ApplyInput, driver: Driver, r: DeclaredResource): Promise<void> {
  try {
    const seen = await driver.observe(r.spec, { ...input.ctx, id: r.id, owner: r.owner });
    if (!seen.exists) await input.inventory.delete(r.id);
  } catch {
    // could not tell whether anything was made: keep the intent; the next reconcile observes again
  }
}

async function removeOne(input: ApplyInput, step: Step): Promise<ResultState | [ResultState, string]> {
  const { inventory, ctx } = input;
  const driver = driverFor(input, step);
  const entry = inventory.get(step.id);
  const spec = step.spec ?? entry?.spec;
  if (!spec) return 'Removed';
  const out = await driver.remove(spec, { ...ctx, id: step.id, owner: step.owner });
  if (out?.retained) {
    ctx.logger.info(`Retained ${step.kind}`, { id: step.id, owner: step.owner, reason: out.message });
    return ['Retained', out.message];
  }
  if (!step.superseded) {
    await inventory.delete(step.id);
  } else if (entry) {
    const key = driver.key(spec, step.id);
    const rest = (entry.superseded ?? []).filter((s) => driver.key(s, step.id) !== key);
    const { superseded: _, ...kept } = entry;
    await inventory.put(rest.length ? { ...kept, superseded: rest } : kept);
  }
  ctx.logger.info(`Removed ${step.kind}`, { id: step.id, owner: step.owner, superseded: step.superseded });
  return 'Removed';
}
