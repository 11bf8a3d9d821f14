/**
 * How the agent holds its log shipper: opened with the agent's identity, its reachability tracker and
 * its outbox (the `LogsDropped` Event goes there like every other event), and its metrics appended to
 * the agent's own.
 */
import type { Transport } from '../../api/client/http-client.ts';
import type { Clock } from '../../api/meta/clock.ts';
import type { Logger } from '../engine/types.ts';
import type { AgentMetrics } from '../metrics.ts';
import type { AgentStore } from '../store/agent-store.ts';
import type { Reachability } from '../sync/reachability.ts';
import { openLogShipper, type LogShipper } from './shipper.ts';

/** Options of `openAgentLogs`. */
export interface AgentLogsOptions {
  stateDir: string;
  node: string;
  /** The agent's client's transport (the shipper shares its connection). */
  transport: Transport;
  store: AgentStore;
  reach: Reachability;
  logger: Logger;
  /** The buffer's bound (default 16 MiB). */
  bufferBytes?: number;
  /** Delivers the outbox now (called after an event was queued while the control plane is reachable). */
  flushOutbox(): void;
  /** The shipper's timers. Default: the real clock. */
  clock?: Clock;
}

/** A shipper that does nothing: what the agent runs when its log buffer cannot be opened. */
const DISABLED: LogShipper = { start: () => {}, stop: async () => {}, metrics: () => '' };

/**
 * Opens the agent's log shipper (not started). A buffer that cannot be opened is logged and leaves the
 * agent without log shipping — never without its services.
 */
export async function openAgentLogs(o: AgentLogsOptions): Promise<LogShipper> {
  return openLogShipper({
    stateDir: o.stateDir,
    node: o.node,
    reach: o.reach,
    logger: o.logger,
    clock: o.clock,
    transport: o.transport,
    ...(o.bufferBytes !== undefined ? { bufferBytes: o.bufferBytes } : {}),
    report: async (event) => {
      await o.store.enqueue({
        ...event,
        involvedObject: { kind: 'Node', name: o.node },
        time: new Date().toISOString(),
      });
      if (o.reach.reachable() === true) o.flushOutbox();
    },
  }).catch((e: unknown) => {
    o.logger.error('Failed to open the log buffer; service logs are not shipped', {
      node: o.node,
      stateDir: o.stateDir,
      error: (e as Error).message,
    });
    return DISABLED;
  });
}

/** The agent's metrics with the shipper's appended (read when scraped). */
export function withLogMetrics(shipper: () => LogShipper | undefined, metrics: AgentMetrics): AgentMetrics {
  return { ...metrics, render: () => metrics.render() + (shipper()?.metrics() ?? '') };
}
