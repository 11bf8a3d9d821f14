/**
 * The agent's serving side, assembled in one place for agent.ts: the proxy that terminates TLS for its
 * routes (with the HTTP-01 challenge fetcher), the certificate material kept in its store, and the node's
 * recovery clock (clock.json for `mesh-agent status`, /metrics, Node.status.certificates).
 */
import type { ClientConfig } from '../../api/client/types.ts';
import type { Client } from '../../api/client/types.ts';
import type { Clock } from '../../api/meta/clock.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import type { Logger } from '../engine/types.ts';
import type { AgentStore } from '../store/agent-store.ts';
import type { Reachability } from '../sync/reachability.ts';
import { clockReport, writeClockFacts, type ClockFacts, type ClockReport } from '../../api/wire/node-clock.ts';
import { createChallengeFetcher } from './challenge.ts';
import { renderClockMetrics } from './clock-metrics.ts';
import { createMaterialSync, type MaterialSync } from './material-sync.ts';
import { createProxyServer, type ProxyServer } from './proxy-server.ts';

/** Options of `createServing`. */
export interface ServingOptions {
  node: string;
  stateDir: string;
  connection: ClientConfig;
  client: Pick<Client, 'raw'>;
  store: AgentStore;
  reach: Reachability;
  logger: Logger;
  clock: Clock;
  declaration(): Declaration | undefined;
  /** Called when new material was stored (the agent reconciles). */
  onMaterial(): void;
}

/** The serving side of one agent. */
export interface Serving {
  proxy: ProxyServer;
  material: MaterialSync;
  /** The clock's facts as of now (what clock.json gets; the node page's view reads them too). */
  facts(): ClockFacts;
  /** The clock as of now. */
  report(): ClockReport;
  /** Writes clock.json (logged, never throws). */
  writeClock(): Promise<void>;
  metrics(): string;
  close(): Promise<void>;
}

/** Assembles the serving side (see the module comment). */
export function createServing(opts: ServingOptions): Serving {
  const { logger, node } = opts;
  const challenges = createChallengeFetcher(opts.connection);
  const proxy = createProxyServer({ logger, fetchChallenge: challenges.fetch });
  const material = createMaterialSync({ ...opts, onChange: opts.onMaterial });
  const facts = (): ClockFacts => ({
    node,
    updatedAt: new Date(opts.clock.now()).toISOString(),
    ...(opts.reach.reachable() !== undefined ? { reachable: opts.reach.reachable() } : {}),
    ...(opts.reach.lastContact() ? { lastContact: opts.reach.lastContact() } : {}),
    ...(opts.reach.unreachableSince() ? { unreachableSince: opts.reach.unreachableSince() } : {}),
    certificates: material.held(),
  });
  const report = (): ClockReport => clockReport(facts(), opts.clock.now());
  return {
    proxy,
    material,
    facts,
    report,
    async writeClock() {
      await writeClockFacts(opts.stateDir, facts()).catch((e: unknown) =>
        logger.error('Failed to write clock file', { node, error: String(e) }),
      );
    },
    metrics: () => renderClockMetrics(report()),
    async close() {
      await proxy.close();
      challenges.close();
    },
  };
}
