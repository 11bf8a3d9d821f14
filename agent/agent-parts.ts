/**
 * The parts of a running agent, wired together (agent.ts owns their life: start, stop, a restart on a new
 * server): its store, the process supervisor, the engine and its drivers (WireGuard key, route proxy), the
 * reconcile loop and its effects, the link to the control plane (reachability, sync), the serving side
 * (serve/), the log shipper and the metrics endpoint. `assembleParts` builds them in dependency order;
 * `haltParts` stops them in reverse, the store last.
 */
import { createClient, type HttpClient } from '../api/client/http-client.ts';
import { realClock } from '../api/meta/clock.ts';
import type { Declaration, DeclaredResource } from '../api/v1alpha1/generated/declaration.ts';
import pkg from '../package.json' with { type: 'json' };
import type { AgentOptions, AgentState } from './agent.ts';
import { declaredResources } from './declared-resources.ts';
import { createProcessSupervisor } from './drivers/process-supervisor.ts';
import { createDriverRegistry } from './drivers/registry.ts';
import { agentOverlayStatus } from './overlay/overlay-status.ts';
import { ensureWireGuardKey } from './overlay/wireguard-key.ts';
import { createEngine, type Engine } from './engine/reconciler.ts';
import type { Logger } from './engine/types.ts';
import { resolveIdentity, type IdentityInput } from './identity.ts';
import { readAgentBootstrap } from '../api/wire/agent-bootstrap.ts';
import { importBootstrap, withBootstrap } from './bootstrap.ts';
import { createAgentMetrics, type MetricsServer } from './metrics.ts';
import { serveMetricsOnStablePort } from './metrics-port.ts';
import { currentNodeView } from './node-page.ts';
import { nodePageRoutes } from './node-page-routes.ts';
import { createReconcileLoop, type ReconcileLoop } from './reconcile-loop.ts';
import { receiveDeclaration } from './receive-declaration.ts';
import { createRunEffects, type RunEffects } from './run-effects.ts';
import type { AgentStore } from './store/agent-store.ts';
import { createReachability, type Reachability } from './sync/reachability.ts';
import { AGENT_CONNECTION, createSync, type Sync } from './sync/sync.ts';
import { ACK_DEFER_MS } from './sync/reporter.ts';
import { openAgentLogs, withLogMetrics } from './logs/agent-logs.ts';
import type { LogShipper } from './logs/shipper.ts';
import { rootError } from './root-dir.ts';
import { createServing, type Serving } from './serve/serving.ts';

/** The agent's version, reported in Node.status.agentVersion. */
export const AGENT_VERSION: string = pkg.version;

/** The parts of a started agent. */
export interface Parts {
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

/** Builds the parts of an agent over its opened store (see the module comment). */
export async function assembleParts(a: {
  opts: AgentOptions;
  logger: Logger;
  store: AgentStore;
  /** After setServer: the stored identity holds the new URL, and the options' connection is stale. */
  serverChanged: boolean;
  /** The agent's state, for /healthz. */
  health: () => AgentState;
}): Promise<Parts> {
  const { opts, logger, store, serverChanged } = a;
  const boot = readAgentBootstrap(opts.stateDir);
  // After setServer the stored identity holds the new URL: this start's own connection (--config) is then stale.
  const given: IdentityInput = serverChanged ? withoutConnection(opts) : opts;
  const { identity, changed, rootFrom } = resolveIdentity(store.identity(), withBootstrap(given, boot), opts.stateDir);
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
  const client = createClient({
    ...AGENT_CONNECTION,
    server: identity.server,
    caData: identity.caData,
    token: identity.token,
  });
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
  const effects = createRunEffects({
    node,
    store,
    metrics,
    logger: log,
    afterRun: (queued) => {
      // The Declaration status says a new generation is applied; the control plane's Node controller copies it
      // into the Node status at once, so no heartbeat is sent for it (one request less per node and change).
      void sync.reporter.reportDeclaration();
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
      receiveDeclaration({
        store,
        node,
        logger: log,
        obj,
        report: () => sync.reporter.reportDeclaration(false, ACK_DEFER_MS),
        loop,
        engine,
      }).then(() => void serving.material.sync()),
  });
  const logs = await openAgentLogs({
    stateDir: opts.stateDir,
    node,
    transport: client.transport,
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
      : await serveMetricsOnStablePort({
          listen,
          metrics,
          health: a.health,
          page: nodePageRoutes({
            node,
            view: () => currentNodeView({ agentVersion: AGENT_VERSION, serving, clock, store, effects, supervisor }),
          }),
          stateDir: opts.stateDir,
          logger: log,
        });
  await serving.writeClock();
  return { logger, store, node, engine, supervisor, reach, effects, loop, client, sync, logs, serving, server };
}

/** The identity input of the options without their connection (the stored one is used). */
function withoutConnection(opts: AgentOptions): IdentityInput {
  const { connection: _stale, ...rest } = opts;
  return rest;
}

/** Stops an agent's parts (its services too when `stopServices`), its store last. */
export async function haltParts(p: Parts, stopServices: boolean): Promise<void> {
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
