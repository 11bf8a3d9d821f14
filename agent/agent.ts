/**
 * The in-process agent (`mesh-agent run` wraps one; a benchmark may run fifty in one process): its
 * own store, one process supervisor for its whole life, the engine, the reconcile loop, the link to
 * the control plane, the shipper of service logs (logs/), the serving side (serve/: the proxy of its
 * routes, certificate material, the recovery clock) and the metrics endpoint — wired by agent-parts.ts;
 * this file owns their life.
 *
 * `start()` opens the store (refusing a damaged one), reconciles AT ONCE from the declaration stored
 * there — whether or not the control plane answers — and only then connects. A new generation seen on
 * the watch is persisted to the store first, then acknowledged (Declaration status observedGeneration),
 * then reconciled, then its results are reported (receive-declaration.ts). `stop()` leaves services running (an agent restart
 * adopts them) unless `stopServicesOnExit`.
 */
import type { ClientConfig } from '../api/client/types.ts';
import type { Clock } from '../api/meta/clock.ts';

import type { ProcessSupervisorOptions } from './drivers/process-supervisor.ts';
import type { Logger } from './engine/types.ts';
import { createJsonLogger } from '../api/meta/logger.ts';
import { degradedReason, type LastOutcome } from './run-effects.ts';
import { openAgentStore } from './store/agent-store.ts';
import { writeAgentInfo } from './agent-info.ts';
import { assembleParts, haltParts, type Parts } from './agent-parts.ts';

export { AGENT_VERSION } from './agent-parts.ts';

/** Options of `createAgent`. Node name, root and connection are required at first start only. */
export interface AgentOptions {
  stateDir: string;
  nodeName?: string;
  /** Every declared path resolves under it. Default: the stored one, else `/`. */
  root?: string;
  /** The control plane (a loaded meshconfig); saved in the store. */
  connection?: ClientConfig;
  /** spec.site of the Node the agent creates when missing. */
  site?: string;
  /** Default 5 s. */
  reconcileIntervalMs?: number;
  /** Default 10 s. */
  heartbeatIntervalMs?: number;
  /** `HOST:PORT` for /metrics and /healthz (default `127.0.0.1:0`); `false`: no endpoint. */
  metricsListen?: string | false;
  /** Stop every supervised service on `stop()` (the local mesh's Ctrl-C). Default false. */
  stopServicesOnExit?: boolean;
  /** This machine's name for the declared WireGuard interface (`--wireguard-interface`). */
  wireguardInterface?: string;
  /** Default: JSON lines on stderr. */
  logger?: Logger;
  /** Supervisor tuning (restart backoff, stop grace, poll interval). */
  supervisor?: Pick<ProcessSupervisorOptions, 'backoff' | 'stopGraceMs' | 'pollMs'>;
  /** Reconnect backoff of the watch (default 250 ms doubling to 5 s). */
  reconnect?: { initialMs?: number; maxMs?: number };
  /** Events kept for the control plane at most (default 200). */
  outboxLimit?: number;
  /** Bytes of service log lines buffered on disk for the control plane at most (default 16 MiB). */
  logBufferBytes?: number;
  /** The clock of every timer of the agent (reconcile, heartbeat, watch, shipper, supervisor). Default: real. */
  clock?: Clock;
}

/** What a started agent reports. */
export interface AgentInfo {
  node: string;
  root: string;
  /** The metrics endpoint, e.g. `http://127.0.0.1:40123` (absent when disabled). */
  metrics?: string;
}

/**
 * A snapshot of the agent's state (also served on /healthz, 503 unless `ok`): not ok while it is not started
 * or when its last reconcile did not apply everything; `reason` then says why.
 */
export interface AgentState {
  ok: boolean;
  reason?: string;
  node: string;
  generation: { received?: number; applied?: number };
  reachable?: boolean;
  unreachableSeconds: number;
  lastReconcile?: LastOutcome;
}

/** An agent; `start()` once, then `stop()`. */
export interface Agent {
  start(): Promise<AgentInfo>;
  stop(): Promise<void>;
  state(): AgentState;
  /**
   * Forgets the backoff of every failed resource and reconciles at once (SIGHUP, `mesh-agent reconcile`);
   * resolves when that reconcile has finished.
   */
  reconcileNow(reason: string): Promise<void>;
  /**
   * Points the agent at a control plane on another URL (`mesh-agent set-server`, after a restore onto a new
   * machine): saves it in the store's identity, then restarts the agent in process — its services keep running
   * and are adopted, as after any restart — so the watch, heartbeat and log shipping connect to the new URL.
   * The CA pin and credential stay: a restored control plane has the same CA and credential hashes.
   */
  setServer(server: string): Promise<void>;
}

/** Creates an agent (see the module comment). */
export function createAgent(opts: AgentOptions): Agent {
  const logger = opts.logger ?? createJsonLogger();
  let parts: Parts | undefined;
  let stopping: Promise<void> | undefined;
  let serverChanged = false;

  const state = (): AgentState => {
    const received = parts?.store.declaration()?.object.spec.generation;
    const last = parts?.effects.lastOutcome();
    const reason = !parts ? 'the agent is not started' : degradedReason(last);
    return {
      ok: reason === undefined,
      ...(reason !== undefined ? { reason } : {}),
      node: parts?.node ?? opts.nodeName ?? '',
      generation: { received, applied: parts?.effects.appliedGeneration() },
      reachable: parts?.reach.reachable(),
      unreachableSeconds: parts?.reach.unreachableSeconds() ?? 0,
      lastReconcile: last,
    };
  };

  async function start(): Promise<AgentInfo> {
    if (parts) throw new Error('the agent is already started');
    const store = await openAgentStore({ stateDir: opts.stateDir, logger, outboxLimit: opts.outboxLimit });
    try {
      parts = await assembleParts({ opts, logger, store, serverChanged, health: state });
    } catch (e) {
      await store.close();
      throw e;
    }
    const p = parts;
    const received = p.store.declaration()?.object;
    await p.loop.trigger('start');
    const info: AgentInfo = {
      node: p.node,
      root: p.store.identity()!.root,
      ...(p.server ? { metrics: p.server.url } : {}),
    };
    if (opts.metricsListen !== false) await writeAgentInfo(opts.stateDir, info);
    logger.info('Started agent', {
      ...info,
      stateDir: opts.stateDir,
      generation: received?.spec.generation,
      unreachableSince: p.reach.unreachableSince(),
    });
    p.sync.start();
    p.logs.start();
    p.loop.start();
    return info;
  }

  async function stop(): Promise<void> {
    const p = parts;
    if (!p) return;
    stopping ??= haltParts(p, opts.stopServicesOnExit ?? false);
    await stopping;
  }

  async function setServer(server: string): Promise<void> {
    const p = parts;
    if (!p || stopping) throw new Error('the agent is not running');
    const identity = p.store.identity()!;
    if (identity.server === server) return;
    await p.store.saveIdentity({ ...identity, server });
    await haltParts(p, false);
    parts = undefined;
    serverChanged = true;
    await start();
    logger.info('Changed control-plane server', { node: p.node, previous: identity.server, server });
  }

  async function reconcileNow(reason: string): Promise<void> {
    const p = parts;
    if (!p || stopping) return;
    p.engine.retryNow();
    await p.loop.trigger(reason);
  }

  return { start, stop, state, reconcileNow, setServer };
}
