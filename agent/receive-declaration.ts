/**
 * A Declaration seen on the watch, taken into the agent's store: a new generation (or a re-issued declaration,
 * after a restore) is stored FIRST, then acknowledged, then reconciled. The acknowledgement (`report`) may be
 * deferred: the agent's is (sync/reporter.ts ACK_DEFER_MS), so that an apply that ends quickly reports both in one write.
 */
import { RESTORED_FROM } from '../api/backup/restored-from.ts';
import type { Declaration } from '../api/v1alpha1/generated/declaration.ts';
import type { Engine } from './engine/reconciler.ts';
import type { Logger } from './engine/types.ts';
import type { ReconcileLoop } from './reconcile-loop.ts';
import type { AgentStore } from './store/agent-store.ts';

/**
 * A declaration with a new uid replaces the stored one whatever its generation: the control plane re-issued it
 * (a restore from a backup does, api/backup/restore.ts). Going back to an older generation is deliberate then,
 * and reported: a log line and a Warning event naming both generations and the backup.
 */
async function reportReplaced(
  a: { store: AgentStore; node: string; logger: Logger; obj: Declaration },
  stored: Declaration,
): Promise<void> {
  const from = stored.spec.generation;
  const to = a.obj.spec.generation;
  const backup = a.obj.metadata.annotations?.[RESTORED_FROM];
  a.logger.info('Replaced Declaration', {
    node: a.node,
    previousGeneration: from,
    generation: to,
    restoredFrom: backup,
  });
  if (to >= from && backup === undefined) return;
  const message =
    `the control plane re-issued this node's declaration${backup ? ` (restored from backup ${backup})` : ''}: ` +
    `generation ${from} is replaced by generation ${to}, and what was declared after the backup is undone on this node`;
  await a.store.enqueue({
    type: 'Warning',
    reason: 'DeclarationReplaced',
    message,
    involvedObject: { kind: 'Declaration', name: a.node },
    time: new Date().toISOString(),
  });
}

/**
 * Handles a Declaration seen on the watch: a new generation is stored FIRST, then acknowledged, then reconciled
 * with every resource's backoff forgotten.
 */
export async function receiveDeclaration(a: {
  store: AgentStore;
  node: string;
  logger: Logger;
  obj: Declaration;
  report(): Promise<void>;
  loop: ReconcileLoop;
  engine: Engine;
}): Promise<void> {
  const stored = a.store.declaration()?.object;
  const m = a.obj.metadata;
  const isNew = !stored || stored.metadata.uid !== m.uid || (m.generation ?? 0) > (stored.metadata.generation ?? 0);
  if (!isNew) return;
  if (stored && stored.metadata.uid !== m.uid) await reportReplaced(a, stored);
  await a.store.saveDeclaration(a.obj);
  a.logger.info('Stored Declaration', {
    node: a.node,
    generation: a.obj.spec.generation,
    resources: a.obj.spec.resources.length,
  });
  await a.report();
  // Something changed: what failed before may apply now (and a changed resource is another resource).
  a.engine.retryNow();
  void a.loop.trigger('new generation');
}
