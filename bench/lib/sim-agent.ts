/**
 * One simulated mesh-agent for the scale benchmark: the agent's own link code (agent/sync: createSync, its
 * reporter and Declaration watch, createReachability) over an in-memory AgentStore, so that on the wire it does
 * exactly what `mesh-agent` does — GET/create its Node, list+watch its Declaration, heartbeat the Node status
 * every interval, write the Declaration status after "applying", deliver its outbox — without a host to change:
 * applying a Declaration marks every resource Applied at once. It also ships two service log lines every
 * `logEveryMs` (`POST …/nodes/<node>/logs`) over the client's connection, as the log shipper does for a quiet service.
 */
import { createClient, type HttpClient } from '../../api/client/http-client.ts';
import { isUnreachable } from '../../api/client/http-transport.ts';
import type { ClientConfig } from '../../api/client/types.ts';
import { silentLogger } from '../../api/meta/logger.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import { logsPath } from '../../api/wire/log-wire.ts';
import type { AgentStore, ConnectionState, OutboxItem } from '../../agent/store/agent-store.ts';
import type { RunSummary } from '../../agent/sync/declaration-status.ts';
import { createReachability, type Reachability } from '../../agent/sync/reachability.ts';
import { AGENT_CONNECTION, createSync, type Sync } from '../../agent/sync/sync.ts';
import { ACK_DEFER_MS } from '../../agent/sync/reporter.ts';
import { roundOf } from './round-tracker.ts';

/** What a simulated agent needs. */
export interface SimAgentOptions {
  node: string;
  config: ClientConfig;
  heartbeatIntervalMs: number;
  logEveryMs: number;
  /** Called when the agent has applied a new generation (before its status write goes out). */
  onApplied?(node: string, generation: number): void;
}

/**
 * The newest bench round (round-tracker.ts `roundOf`) this agent was sent: when its Declaration arrived, and when the
 * control plane answered the status write that reported it applied. Times are `epochMs()`: comparable across the
 * bench's processes.
 */
export interface RoundMark {
  round: number;
  received: number;
  reported?: number;
}

/** Now, in ms since the epoch at sub-millisecond resolution (performance.now() is per process). */
export const epochMs = (): number => performance.timeOrigin + performance.now();

/** A running simulated agent. */
export interface SimAgent {
  readonly node: string;
  reachable(): boolean | undefined;
  appliedGeneration(): number | undefined;
  /** The newest round's mark (see RoundMark); undefined before the first round's Declaration. */
  mark(): RoundMark | undefined;
  stop(): Promise<void>;
}

/** The agent store's interface in memory: only the connection state, the declaration and the outbox are used. */
function memoryStore(): AgentStore {
  let connection: ConnectionState = {};
  let decl: Declaration | undefined;
  let outbox: OutboxItem[] = [];
  let seq = 0;
  const unused = (): never => {
    throw new Error('not used by the simulated agent');
  };
  return {
    dir: '',
    identity: () => undefined,
    saveIdentity: async () => unused(),
    connection: () => connection,
    updateConnection: async (patch) => {
      connection = { ...connection, ...patch };
    },
    declaration: () => (decl ? { object: decl, receivedAt: '' } : undefined),
    saveDeclaration: async (d) => {
      decl = d;
    },
    inventory: () => [],
    applyInventoryChange: async () => unused(),
    outbox: () => outbox,
    enqueue: async (item) => {
      outbox.push({ ...item, name: String(seq++).padStart(8, '0') });
      return 0;
    },
    dequeue: async (name) => {
      outbox = outbox.filter((i) => i.name !== name);
    },
    materials: () => [], // no routes in the benchmark's mesh
    saveMaterial: async () => unused(),
    deleteMaterial: async () => unused(),
    close: async () => {},
  };
}

/** Starts one simulated agent in the background. */
export function startSimAgent(opts: SimAgentOptions): SimAgent {
  const { node } = opts;
  const store = memoryStore();
  const reach: Reachability = createReachability({ store, logger: silentLogger, node, server: opts.config.server });
  const http: HttpClient = createClient({ ...AGENT_CONNECTION, ...opts.config });
  let mark: RoundMark | undefined;
  const noteReported = (d: Declaration): void => {
    if (
      mark &&
      mark.reported === undefined &&
      roundOf(d) === mark.round &&
      d.status?.appliedGeneration === d.spec.generation
    )
      mark.reported = epochMs();
  };
  // The agent's own client, but the answer to each Declaration status write is also looked at (RoundMark).
  const client: HttpClient = {
    ...http,
    patch: (plural, name, patch, o) => {
      const out = http.patch(plural, name, patch, o);
      if (plural === 'declarations' && o?.subresource === 'status')
        out.then(
          (d) => noteReported(d as Declaration),
          () => undefined,
        );
      return out;
    },
  };
  let run: RunSummary | undefined;
  let applied: number | undefined;
  const apply = (d: Declaration): void => {
    const results = d.spec.resources.map((r) => ({
      id: r.id,
      kind: r.kind,
      owner: r.owner ?? '',
      action: 'noop' as const,
      state: 'Applied' as const,
    }));
    run = { uid: d.metadata.uid, generation: d.metadata.generation ?? 0, results, at: new Date().toISOString() };
    applied = d.spec.generation;
    opts.onApplied?.(node, d.spec.generation);
    // As the agent's afterRun: the Declaration status (the Node controller copies the applied generation to the Node).
    void sync.reporter.reportDeclaration();
  };
  const sync: Sync = createSync({
    client,
    node,
    store,
    reach,
    logger: silentLogger,
    agentVersion: 'bench-sim',
    heartbeatIntervalMs: opts.heartbeatIntervalMs,
    state: { declaration: () => store.declaration()?.object, run: () => run, appliedGeneration: () => applied },
    async onDeclaration(obj) {
      if (store.declaration()?.object.spec.generation === obj.spec.generation) return;
      const round = roundOf(obj);
      if (round >= 0 && round !== mark?.round) mark = { round, received: epochMs() };
      await store.saveDeclaration(obj);
      void sync.reporter.reportDeclaration(false, ACK_DEFER_MS);
      setImmediate(() => apply(obj));
    },
  });
  sync.start();
  // As the agent's log shipper: over the client's transport, sharing its kept-alive connection, and recording the
  // outcome in the reachability tracker (an answered POST renewed the node's lease: agent/sync/sync.ts).
  const logs = client.transport;
  let line = 0;
  const ship = (): void => {
    const time = new Date().toISOString();
    const entries = [0, 1].map(() => ({ seq: ++line, service: 'bench/app', time, line: `line ${line} of ${node}` }));
    if (reach.reachable() === true)
      void logs.json({ method: 'POST', path: logsPath(node), body: { stream: 's1', entries } }).then(
        () => reach.succeeded(),
        (e: unknown) => {
          if (!(isUnreachable(e) && reach.failed(e))) reach.succeeded();
        },
      );
  };
  // The first ship at a random point of the period, as agents' logs are not in step: the agents of one worker all start
  // within startSpreadMs, and their log POSTs would otherwise come as a burst every period.
  let logTimer: NodeJS.Timeout = setTimeout(() => {
    ship();
    logTimer = setInterval(ship, opts.logEveryMs);
  }, Math.random() * opts.logEveryMs);
  return {
    node,
    reachable: () => reach.reachable(),
    appliedGeneration: () => applied,
    mark: () => mark,
    async stop() {
      clearTimeout(logTimer); // the first ship's timeout or the interval
      reach.close();
      await sync.stop();
      http.close();
    },
  };
}
