/**
 * The node page's JSON view (api/meta/node-page.ts), from what the agent holds itself: the recovery clock's
 * facts (the same `clockReport` that `mesh-agent status` prints from clock.json, so the page and the command
 * agree), the Declaration in its store, its last reconcile (the same per-resource states the agent reports as
 * the Declaration's status) and its supervisor's processes. Nothing here asks the control plane.
 *
 * Only ids, kinds, owners, states and messages of resources are shown — never a spec: a File's content, a
 * Service's env or command may hold secrets.
 */
import type { NodePageStatus, NodeServiceView } from '../api/meta/node-page.ts';
import { clockReport, type ClockFacts } from '../api/wire/node-clock.ts';
import type { ProcessStatus, ProcessSupervisor } from './drivers/process-types.ts';
import type { Clock } from '../api/meta/clock.ts';
import type { LastOutcome, RunEffects } from './run-effects.ts';
import type { Serving } from './serve/serving.ts';
import type { AgentStore } from './store/agent-store.ts';
import type { ReceivedDeclaration } from './store/records.ts';
import { declarationStatus, type RunSummary } from './sync/declaration-status.ts';

/** What the view is computed from (all of it the agent's own). */
export interface NodeViewInput {
  agentVersion: string;
  /** The recovery clock's facts, as the agent writes them to clock.json. */
  facts: ClockFacts;
  nowMs: number;
  declaration?: ReceivedDeclaration;
  /** The last reconcile's results (used when it was of the stored declaration). */
  run?: RunSummary;
  appliedGeneration?: number;
  lastOutcome?: LastOutcome;
  /** The supervisor's status of each declared `process` Service, by resource id (absent: not started). */
  processes: ReadonlyMap<string, ProcessStatus>;
}

/** The node page's JSON view (pure; see the module comment). */
export function nodeStatusView(input: NodeViewInput): NodePageStatus {
  const clock = clockReport(input.facts, input.nowMs);
  const stored = input.declaration;
  const last = input.lastOutcome;
  return {
    node: clock.node,
    agentVersion: input.agentVersion,
    generatedAt: new Date(input.nowMs).toISOString(),
    controlPlane: {
      ...(clock.reachable !== undefined ? { reachable: clock.reachable } : {}),
      ...(clock.lastContact ? { lastContact: clock.lastContact } : {}),
      ...(clock.unreachableSince ? { unreachableSince: clock.unreachableSince } : {}),
      unreachableSeconds: clock.unreachableSeconds,
    },
    certificates: clock.certificates.map((c) => ({ ...c })),
    ...(clock.deadline !== undefined
      ? { deadline: { notAfter: clock.deadline, budgetSeconds: clock.budgetSeconds ?? 0, setBy: clock.setBy ?? '' } }
      : {}),
    ...(stored
      ? {
          declaration: {
            desiredGeneration: stored.object.spec.generation,
            ...(input.appliedGeneration !== undefined ? { appliedGeneration: input.appliedGeneration } : {}),
            receivedAt: stored.receivedAt,
          },
        }
      : {}),
    resources: resourcesView(input),
    services: (stored?.object.spec.resources ?? []).flatMap((r) =>
      r.kind === 'Service' ? [serviceView(r.id, r.spec.driver ?? 'process', input.processes.get(r.id))] : [],
    ),
    ...(last ? { lastReconcile: { at: last.at, outcome: last.outcome } } : {}),
  };
}

/** The declared resources in order with the states the agent reports in the Declaration's status. */
function resourcesView(input: NodeViewInput): NodePageStatus['resources'] {
  const decl = input.declaration?.object;
  if (!decl) return [];
  const status = declarationStatus({ decl, run: input.run, now: new Date(input.nowMs).toISOString() });
  const byId = new Map((status.results ?? []).map((r) => [r.id, r]));
  return decl.spec.resources.map((r) => {
    const res = byId.get(r.id);
    return {
      id: r.id,
      kind: r.kind,
      owner: r.owner,
      state: res?.state ?? 'Pending',
      ...(res?.message !== undefined ? { message: res.message } : {}),
    };
  });
}

function serviceView(id: string, driver: 'process' | 'systemd', st: ProcessStatus | undefined): NodeServiceView {
  if (driver !== 'process' || !st) return { id, driver };
  return {
    id,
    driver,
    phase: st.phase,
    ...(st.pid !== undefined && st.pid > 0 ? { pid: st.pid } : {}),
    restarts: st.restarts,
    ...(st.lastExit ? { lastExit: st.lastExit } : {}),
  };
}

/** Where a running agent's view comes from (agent-parts.ts wires it): its own parts. */
export interface NodeViewSources {
  agentVersion: string;
  serving: Pick<Serving, 'facts'>;
  clock: Pick<Clock, 'now'>;
  store: Pick<AgentStore, 'declaration'>;
  effects: Pick<RunEffects, 'lastRun' | 'appliedGeneration' | 'lastOutcome'>;
  supervisor: Pick<ProcessSupervisor, 'inspect'>;
}

/**
 * The running agent's view, as of now: asks its supervisor about each declared `process` Service (`inspect`, which
 * adopts a process an earlier agent recorded, as the Service driver's observe does at the next reconcile anyway).
 */
export async function currentNodeView(src: NodeViewSources): Promise<NodePageStatus> {
  const declaration = src.store.declaration();
  const processes = new Map<string, ProcessStatus>();
  for (const r of declaration?.object.spec.resources ?? []) {
    if (r.kind !== 'Service' || (r.spec.driver ?? 'process') !== 'process') continue;
    const st = await src.supervisor.inspect(r.id).catch(() => undefined);
    if (st) processes.set(r.id, st);
  }
  return nodeStatusView({
    agentVersion: src.agentVersion,
    facts: src.serving.facts(),
    nowMs: src.clock.now(),
    declaration,
    run: src.effects.lastRun(),
    appliedGeneration: src.effects.appliedGeneration(),
    lastOutcome: src.effects.lastOutcome(),
    processes,
  });
}
