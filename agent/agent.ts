/**
 * The in-process agent (`mesh-agent run` wraps one; a benchmark may run fifty in one process): its
 * own store, one process supervisor for its whole life, the engine, the reconcile loop, the link to
 * the control plane, the shipper of service logs (logs/), the serving side (serve/: the proxy of its
 * routes, certificate material, the recovery clock) and the metrics endpoint.
 *
 * `start()` opens the store (refusing a damaged one), reconciles AT ONCE from the declaration stored
 * there — whether or not the control plane answers — and only then connects. A new generation seen on
 * the watch is persisted to the store first, then acknowledged (Declaration status observedGeneration),
 * then reconciled, then its results are reported. `stop()` leaves services running (an agent restart
 * adopts them) unless `stopServicesOnExit`.
 */
import { createClient, type HttpClient } from '../api/client/http-client.ts';
import type { ClientConfig } from '../api/client/types.ts';
import { realClock, type Clock } from '../api/meta/clock.ts';
import type { Declaration, DeclaredResource } from '../api/v1alpha1/generated/declaration.ts';
import pkg from '../package.json' with { type: 'json' };
import { declaredResources } from './declared-resources.ts';
import { createProcessSupervisor, type ProcessSupervisorOptions } from './drivers/process-supervisor.ts';
import { createDriverRegistry } from './drivers/registry.ts';
import { agentOverlayStatus } from './overlay/overlay-status.ts';
import { ensureWireGuardKey } from './overlay/wireguard-key.ts';
import { createEngine, type Engine } from './engine/reconciler.ts';
import type { Logger } from './engine/types.ts';
import { resolveIdentity, type IdentityInput } from './identity.ts';
import { readAgentBootstrap } from '../api/wire/agent-bootstrap.ts';
import { importBootstrap, withBootstrap } from './bootstrap.ts';
import { createJsonLogger } from '../api/meta/logger.ts';
import { RESTORED_FROM } from '../api/backup/restored-from.ts';
import { createAgentMetrics, type MetricsServer } from './metrics.ts';
import { serveMetricsOnStablePort } from './metrics-port.ts';
import { createReconcileLoop, type ReconcileLoop } from './reconcile-loop.ts';
import { createRunEffects, degradedReason, type LastOutcome, type RunEffects } from './run-effects.ts';
import { openAgentStore, type AgentStore } from './store/agent-store.ts';
import { createReachability, type Reachability } from './sync/reachability.ts';
import { createSync, type Sync } from './sync/sync.ts';
import { openAgentLogs, withLogMetrics } from './logs/agent-logs.ts';
import type { LogShipper } from './logs/shipper.ts';
import { writeAgentInfo } from './agent-info.ts';
import { rootError } from './root-dir.ts';
import { createServing, type Serving } from './serve/serving.ts';

/** The agent's version, reported in Node.status.agentVersion. */
export const AGENT_VERSION: string = pkg.version;

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

interface Parts {
  logger: Logger;
  store: AgentStore;
  node: string;
  engine: Engine;
  supervisor: ReturnType<typeof createProcessSupervisor>;
  reach: Reachability;
  effects: RunEffects;
  loop: ReconcileLoop;
  client: HttpClient;
  sync: Sync;
  logs: LogShipper;
  serving: Serving;
  server?: MetricsServer;
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
      parts = await assemble(store);
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

  async function assemble(store: AgentStore): Promise<Parts> {
    const boot = readAgentBootstrap(opts.stateDir);
    // After setServer the stored identity holds the new URL: this start's own connection (--config) is then stale.
    const given: IdentityInput = serverChanged ? withoutConnection(opts) : opts;
    const { identity, changed, rootFrom } = resolveIdentity(
      store.identity(),
      withBootstrap(given, boot),
      opts.stateDir,
    );
    const badRoot = rootError(identity.root, rootFrom ?? 'flag', opts.stateDir);
    if (badRoot !== undefined) throw new Error(badRoot);
    if (changed) await store.saveIdentity(identity);
    if (boot) await importBootstrap({ store, stateDir: opts.stateDir, boot, logger });
    const node = identity.nodeName;
    const log = withNode(logger, node);
    const clock = opts.clock ?? realClock;
    const supervisor = createProcessSupervisor({ stateDir: opts.stateDir, logger: log, clock, ...opts.supervisor });
    const wgKey = await ensureWireGuardKey(opts.stateDir);
    if (wgKey.created) log.info('Generated WireGuard key', { publicKey: wgKey.publicKey });
    const wireguard = { key: () => wgKey, interfaceName: opts.wireguardInterface };
    const reach = createReachability({ store, logger: log, node, server: identity.server, now: () => clock.now() });
    const client = createClient({ server: identity.server, caData: identity.caData, token: identity.token });
    const serving = createServing({
      node,
      stateDir: opts.stateDir,
      connection: { server: identity.server, caData: identity.caData, token: identity.token },
      client,
      store,
      reach,
      logger: log,
      clock,
      declaration: () => store.declaration()?.object,
      onMaterial: () => {
        void serving.writeClock();
        engine.retryNow(); // the Files and the HttpsProxy waiting for this material apply now
        void loop.trigger('new certificate material');
      },
    });
    const engine = createEngine({
      drivers: createDriverRegistry({ supervisor, wireguard, proxy: serving.proxy }),
      ctx: { root: identity.root, stateDir: opts.stateDir, logger: log, clock },
      loadInventory: async () => store.inventory(),
      saveInventory: (_all, change) => store.applyInventoryChange(change),
    });
    const metrics = withLogMetrics(
      () => logs,
      createAgentMetrics({
        node,
        version: AGENT_VERSION,
        unreachableSeconds: () => reach.unreachableSeconds(),
        generations: () => ({
          received: store.declaration()?.object.spec.generation,
          applied: effects.appliedGeneration(),
        }),
        outboxItems: () => store.outbox().length,
        extra: () => serving.metrics(),
      }),
    );
    let heartbeatApplied: number | undefined;
    const effects = createRunEffects({
      node,
      store,
      metrics,
      logger: log,
      afterRun: (queued) => {
        void sync.reporter.reportDeclaration();
        // A newly applied generation goes into the Node status at once, not at the next heartbeat.
        if (effects.appliedGeneration() !== heartbeatApplied && reach.reachable() === true) {
          heartbeatApplied = effects.appliedGeneration();
          void sync.reporter.heartbeat();
        }
        if (queued && reach.reachable() === true) void sync.reporter.flushOutbox();
      },
    });
    // Resolved once per declaration and material version (a renewed certificate is new File content).
    let memo = { decl: undefined as Declaration | undefined, version: -1, resources: [] as DeclaredResource[] };
    const resources = (d: Declaration): DeclaredResource[] => {
      const version = serving.material.version();
      if (memo.decl !== d || memo.version !== version)
        memo = { decl: d, version, resources: declaredResources(d, serving.material.resolve) };
      return memo.resources;
    };
    const loop = createReconcileLoop({
      engine,
      node,
      logger: log,
      intervalMs: opts.reconcileIntervalMs ?? 5000,
      resources,
      clock,
      declaration: () => store.declaration()?.object,
      onRun: (o) => effects.onRun(o),
    });
    const sync = createSync({
      client,
      node,
      site: identity.site,
      store,
      reach,
      logger: log,
      agentVersion: AGENT_VERSION,
      heartbeatIntervalMs: opts.heartbeatIntervalMs ?? 10_000,
      backoff: opts.reconnect,
      clock,
      beforeHeartbeat: () => serving.material.sync(),
      afterHeartbeat: () => serving.writeClock(),
      state: {
        declaration: () => store.declaration()?.object,
        run: () => effects.lastRun(),
        appliedGeneration: () => effects.appliedGeneration(),
        overlay: () =>
          agentOverlayStatus({
            publicKey: wgKey.publicKey,
            declaration: store.declaration()?.object,
            results: effects.lastRun()?.results,
            interfaceName: opts.wireguardInterface,
          }),
        certificates: () => serving.material.held(),
      },
      onDeclaration: (obj) =>
        receive({ store, node, logger: log, obj, report: () => sync.reporter.reportDeclaration(), loop, engine }).then(
          () => void serving.material.sync(),
        ),
    });
    const logs = await openAgentLogs({
      stateDir: opts.stateDir,
      node,
      identity,
      store,
      reach,
      logger: log,
      bufferBytes: opts.logBufferBytes,
      clock,
      flushOutbox: () => void sync.reporter.flushOutbox(),
    });
    const listen = opts.metricsListen ?? '127.0.0.1:0';
    const server =
      listen === false
        ? undefined
        : await serveMetricsOnStablePort({ listen, metrics, health: state, stateDir: opts.stateDir, logger: log });
    await serving.writeClock();
    return { logger, store, node, engine, supervisor, reach, effects, loop, client, sync, logs, serving, server };
  }

  async function stop(): Promise<void> {
    const p = parts;
    if (!p) return;
    stopping ??= halt(p, opts.stopServicesOnExit ?? false);
    await stopping;
  }

  async function setServer(server: string): Promise<void> {
    const p = parts;
    if (!p || stopping) throw new Error('the agent is not running');
    const identity = p.store.identity()!;
    if (identity.server === server) return;
    await p.store.saveIdentity({ ...identity, server });
    await halt(p, false);
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

/** The identity input of the options without their connection (the stored one is used). */
function withoutConnection(opts: AgentOptions): IdentityInput {
  const { connection: _stale, ...rest } = opts;
  return rest;
}

/** Stops an agent's parts (its services too when `stopServices`), its store last. */
async function halt(p: Parts, stopServices: boolean): Promise<void> {
  p.reach.close();
  p.client.close();
  await p.sync.stop();
  await p.logs.stop();
  await p.loop.stop();
  await p.serving.writeClock();
  await p.serving.close();
  if (stopServices) await p.supervisor.stopAll();
  p.supervisor.close();
  await p.server?.close();
  await p.store.close();
  p.logger.info('Stopped agent', { node: p.node, servicesStopped: stopServices });
}

/** A logger that adds `node` to every line (the engine's and supervisor's lines name only the resource). */
function withNode(logger: Logger, node: string): Logger {
  return { info: (msg, f) => logger.info(msg, { node, ...f }), error: (msg, f) => logger.error(msg, { node, ...f }) };
}

/**
 * Handles a Declaration seen on the watch: a new generation is stored FIRST, then acknowledged, then reconciled
 * with every resource's backoff forgotten.
 */
async function receive(a: {
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
