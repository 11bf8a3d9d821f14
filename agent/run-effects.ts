/**
 * What follows each reconcile: metrics, the applied generation (persisted when it changes), one log
 * line and one outbox event per notable happening — a generation applied in full, drift corrected on a
 * generation already applied, a new set of failing resources — and a Declaration status report.
 * Quiet reconciles (everything already in place) produce nothing but metrics.
 */
import type { Logger, ResourceResult } from './engine/types.ts';
import type { AgentMetrics } from './metrics.ts';
import type { RunOutcome } from './reconcile-loop.ts';
import type { AgentStore, OutboxItem } from './store/agent-store.ts';
import type { RunSummary } from './sync/declaration-status.ts';

/** Options of `createRunEffects`. */
export interface RunEffectsOptions {
  node: string;
  store: AgentStore;
  metrics: AgentMetrics;
  logger: Logger;
  /** Called after each run with whether events were queued (the agent reports and flushes). */
  afterRun(queuedEvents: boolean): void;
}

/** How the last reconcile went (served on /healthz): `notApplied` lists `id State` of the failed and Waiting resources. */
export interface LastOutcome {
  at: string;
  startedAt: string;
  /** `waiting`: everything else applied, some resources wait for material (not degraded). */
  outcome: 'success' | 'failure' | 'waiting' | 'error';
  durationMs: number;
  error?: string;
  resources?: number;
  notApplied?: string[];
}

/** Why the last reconcile leaves the agent degraded (/healthz 503), or undefined when it applied everything. */
export function degradedReason(last: LastOutcome | undefined): string | undefined {
  if (last?.outcome === 'error') return `the last reconcile failed: ${last.error ?? 'unknown error'}`;
  if (last?.outcome !== 'failure') return undefined;
  const bad = last.notApplied ?? [];
  const shown = bad.length > 10 ? [...bad.slice(0, 10), `and ${bad.length - 10} more`] : bad;
  return `the last reconcile did not apply ${bad.length} of ${last.resources ?? '?'} resources: ${shown.join(', ')}`;
}

/** The agent's memory of its last reconcile. */
export interface RunEffects {
  onRun(outcome: RunOutcome): Promise<void>;
  /** The last successful engine run (for the Declaration status). */
  lastRun(): RunSummary | undefined;
  lastOutcome(): LastOutcome | undefined;
  appliedGeneration(): number | undefined;
}

/** Creates the after-reconcile effects, starting from the applied generation in the store. */
export function createRunEffects(opts: RunEffectsOptions): RunEffects {
  const { node, store, metrics, logger } = opts;
  let applied = store.connection().appliedGeneration;
  let run: RunSummary | undefined;
  let last: LastOutcome | undefined;
  let failing = '';
  let waitingFor = '';

  const event = async (item: Omit<OutboxItem, 'name' | 'time' | 'involvedObject'>): Promise<void> => {
    const dropped = await store.enqueue({
      ...item,
      involvedObject: { kind: 'Declaration', name: node },
      time: new Date().toISOString(),
    });
    if (dropped > 0) logger.error('Dropped oldest unreported events', { node, dropped });
  };

  async function onRun(o: RunOutcome): Promise<void> {
    const at = new Date().toISOString();
    const startedAt = new Date(Date.parse(at) - Math.ceil(o.durationMs)).toISOString();
    if (!o.result) {
      metrics.reconciled('error', o.durationMs / 1000);
      last = { at, startedAt, outcome: 'error', durationMs: o.durationMs, error: o.error?.message };
      return;
    }
    const { results, steps } = o.result;
    const generation = o.decl.spec.generation;
    const declared = results.filter((r) => r.action !== 'remove');
    const bad = [
      ...declared.filter((r) => r.state !== 'Applied' && r.state !== 'Waiting'),
      ...results.filter((r) => r.action === 'remove' && r.state === 'Failed'),
    ];
    const waiting = declared.filter((r) => r.state === 'Waiting');
    const outcome = bad.length > 0 ? 'failure' : waiting.length > 0 ? 'waiting' : 'success';
    metrics.reconciled(outcome, o.durationMs / 1000);
    metrics.setOwned(o.result.owned);
    run = { uid: o.decl.metadata.uid, generation: o.decl.metadata.generation ?? 0, results, at };
    const notApplied = [...bad, ...waiting].map((r) => `${r.action === 'remove' ? 'remove ' : ''}${r.id} ${r.state}`);
    last = { at, startedAt, outcome, durationMs: o.durationMs, resources: declared.length, notApplied };
    const changed = steps.filter((s) => s.action === 'create' || s.action === 'update' || s.action === 'remove');
    let queued = false;
    if (declared.every((r) => r.state === 'Applied') && applied !== generation) {
      applied = generation;
      await store.updateConnection({ appliedGeneration: generation });
      logger.info('Applied Declaration', {
        node,
        generation,
        resources: declared.length,
        changed: changed.length,
        durationMs: Math.round(o.durationMs),
      });
      await event({
        type: 'Normal',
        reason: 'Applied',
        message: `applied generation ${generation}: ${declared.length} resources, ${changed.length} changed`,
      });
      queued = true;
    } else if (bad.length === 0 && changed.length > 0) {
      const ids = changed.map((s) => s.id);
      logger.info('Corrected drift', { node, generation, resources: ids });
      await event({ type: 'Normal', reason: 'DriftCorrected', message: `restored ${ids.join(', ')}`.slice(0, 4096) });
      queued = true;
    }
    const signature = bad.map((r) => `${r.action}:${r.id}:${r.state}`).join(',');
    if (signature !== failing && bad.length > 0) {
      const failed = bad.map((r) => ({ id: r.id, action: r.action, state: r.state, message: r.message }));
      logger.error('Failed to apply Declaration resources', { node, generation, failed });
      const text = failed.map((f) => `${f.id} ${f.state}${f.message ? `: ${f.message}` : ''}`).join('; ');
      await event({ type: 'Warning', reason: 'ApplyFailed', message: text.slice(0, 4096) });
      queued = true;
    }
    failing = signature;
    queued = (await reportWaiting(waiting, generation)) || queued;
    opts.afterRun(queued);
  }

  /** Says once per set of Waiting resources what they wait for (info and a Normal event: not a failure). */
  async function reportWaiting(waiting: readonly ResourceResult[], generation: number): Promise<boolean> {
    const signature = waiting.map((r) => `${r.id}:${r.message ?? ''}`).join(',');
    const changed = signature !== waitingFor && waiting.length > 0;
    waitingFor = signature;
    if (!changed) return false;
    const items = waiting.map((r) => ({ id: r.id, message: r.message }));
    logger.info('Waiting for material from the control plane', { node, generation, waiting: items });
    const text = items.map((w) => `${w.id}${w.message ? `: ${w.message}` : ''}`).join('; ');
    await event({ type: 'Normal', reason: 'Waiting', message: text.slice(0, 4096) });
    return true;
  }

  return { onRun, lastRun: () => run, lastOutcome: () => last, appliedGeneration: () => applied };
}
