/**
 * The agent's link to the control plane, wired together: make sure its Node exists, watch its
 * Declaration, heartbeat the Node status every `heartbeatIntervalMs`, write the Declaration status when
 * it changed, and deliver the outbox. When contact returns after an outage it reports at once: a heartbeat
 * (what tells the control plane the node is back, so it goes first; none when the tick's heartbeat in flight, which
 * found it back or goes out right after, is written), the status of the current generation if it changed meanwhile,
 * and the outbox; and wakes the watch. The watch's list after a control-plane restart or restore shows the status the
 * control plane holds, and the reporter writes it again if it is not the last one written (reporter.compareStored) —
 * not blindly on every return: N agents coming back to a restarted control plane would each rewrite an unchanged
 * status.
 *
 * Every request of the agent the control plane answers renews the node's lease there, as a heartbeat does
 * (api/server/access/node-leases.ts `contact`): a log POST, a Declaration status write, an Event. So a heartbeat that
 * would only repeat what the control plane has (the last one's status but for the contact time, and an applied
 * generation the last Declaration status written carried, which the Node controller copies to the Node) is skipped
 * when such a request was answered since — never two in a row — and the next one is due an interval later, as after a
 * heartbeat written. So the ticks keep their pace, each request that renewed the lease takes one heartbeat's place,
 * and the control plane still hears from the node within two intervals (±10 %), half the default grace period of
 * four. (Earlier forms re-armed the next heartbeat an interval after the renewing request, or half an interval after
 * the skipped one: within 1.5 intervals, but each skip brought the next heartbeat forward, and at the scale bench's
 * rates — a heartbeat every 10 s, a log POST every 30 s — its 5,000 agents wrote 385 heartbeats a second where one
 * fewer per log POST is 333.) A node whose log POSTs renew its lease all the time still writes a heartbeat every other
 * interval, which keeps its stored lastSeen and controlPlaneLastContact fresh. An apply is no heartbeat's news
 * either: during a change to every node, each node's Declaration status write renews its lease and carries what
 * its next heartbeat would have said.
 */
import { realClock, spreadAround, type TimerHandle } from '../../api/meta/clock.ts';
import type { Declaration } from '../../api/v1alpha1/generated/declaration.ts';
import { startDeclarationWatch, type DeclarationWatch } from './declaration-watch.ts';
import { createReporter, type Reporter, type ReporterOptions } from './reporter.ts';

/**
 * How the agent's client connects to the control plane (ClientConfig fields). One connection for every call and
 * log POST (the watch has its own): a call made while it is busy or being opened waits for it rather than opening
 * another. And up to two minutes for a new connection to be accepted and its TLS handshake done: a control plane
 * that many agents reconnect to at once serves its accept queue in order, and a client that gave up after 30 s
 * and reconnected at the back of the queue left it a handshake for nobody (at N = 5,000, 63 % of the connections
 * it accepted, then all of them: bench §9). The requests themselves keep the 30 s timeout. A 429 is retried after
 * one to two times its Retry-After (retryJitter): the agents a busy control plane refused at once come back spread
 * out, not in the same second (answering 429s took a quarter of its time at N = 5,000).
 */
export const AGENT_CONNECTION = { maxConnections: 1, connectTimeoutMs: 120_000, retryJitter: 1 } as const;

/**
 * Each heartbeat comes up to this part of the interval earlier or later than one interval after the previous one
 * (uniformly; the mean is the interval). Agents that heartbeat together — all reconnecting after the control plane
 * restarted, or resumed after a pause — would otherwise stay in step, and the control plane would get the whole
 * mesh's heartbeats in one burst every interval: ±10 % widens such a burst by up to two seconds (at 10 s) every
 * interval. A heartbeat is then at most 1.1 intervals after the previous one (after a skipped one, 2.2 after the
 * last one written: see the module comment), well within the default grace period of four intervals
 * (controllers/node-reachability.ts).
 */
export const HEARTBEAT_SPREAD = 0.1;

/** Options of `createSync`. */
export interface SyncOptions extends ReporterOptions {
  heartbeatIntervalMs: number;
  /** Runs before each heartbeat (the agent fetches certificate material then). Must not throw. */
  beforeHeartbeat?: () => Promise<unknown>;
  /** Runs after each heartbeat, reachable or not (the agent writes its clock file then). Must not throw. */
  afterHeartbeat?: () => Promise<unknown>;
  /** Called for every Declaration seen; decides whether it is new (persist, acknowledge, reconcile). */
  onDeclaration(obj: Declaration): Promise<void>;
  backoff?: { initialMs?: number; maxMs?: number };
  /** Draws the heartbeats' spread (HEARTBEAT_SPREAD). Default Math.random. */
  random?: () => number;
  watchIdleTimeoutMs?: number;
}

/** The running link to the control plane. */
export interface Sync {
  /** The status/heartbeat/outbox writer (use it to report after a reconcile). */
  readonly reporter: Reporter;
  start(): void;
  stop(): Promise<void>;
}

/** Creates the link; `start()` runs it in the background. */
export function createSync(opts: SyncOptions): Sync {
  const reporter = createReporter(opts);
  const clock = opts.clock ?? realClock;
  const random = opts.random ?? Math.random;
  let watch: DeclarationWatch | undefined;
  let timer: TimerHandle | undefined;
  let beating: Promise<void> = Promise.resolve();
  let stopped = false;
  /** Whether the last tick skipped its heartbeat (see the module comment): the next one is then written whatever happened. */
  let skipped = false;

  /**
   * The tick's heartbeat while it is in flight (resolving false when it was skipped): when contact returns meanwhile
   * — it is what found the control plane back, or it goes out right after — it is the return's heartbeat.
   */
  let tickBeat: Promise<boolean> | undefined;

  const beat = async (): Promise<void> => {
    await opts.beforeHeartbeat?.();
    tickBeat = reporter.heartbeat({ skipWhenRenewed: !skipped }); // never rejects (reporter.ts: no method throws)
    skipped = !(await tickBeat);
    tickBeat = undefined;
    await opts.afterHeartbeat?.();
    if (opts.reach.reachable() === true) {
      await reporter.reportDeclaration();
      if (opts.store.outbox().length > 0) await reporter.flushOutbox();
    }
  };
  const tick = (): void => {
    if (stopped) return;
    beating = beat().finally(() => {
      if (stopped) return;
      timer = clock.setTimeout(tick, spreadAround(opts.heartbeatIntervalMs, HEARTBEAT_SPREAD, random));
    });
  };

  opts.reach.onReturn((lostSeconds, since) => {
    if (stopped) return;
    const inFlight = tickBeat;
    watch?.wake();
    const generation = opts.state.declaration()?.spec.generation;
    const message =
      `the control plane was unreachable for ${Math.round(lostSeconds)}s (since ${since}); ` +
      (generation === undefined
        ? 'the node had no declaration yet'
        : `the node kept running declaration generation ${generation}`);
    const queued = opts.store.enqueue({
      type: 'Warning',
      reason: 'ControlPlaneUnreachable',
      message,
      involvedObject: { kind: 'Node', name: opts.node },
      time: new Date().toISOString(),
    });
    void queued
      .catch((e: unknown) => opts.logger.error('Failed to queue event', { node: opts.node, error: String(e) }))
      .then(async () => {
        if (!(inFlight && (await inFlight))) await reporter.heartbeat();
      })
      .then(() => reporter.reportDeclaration())
      .then(() => reporter.flushOutbox());
  });

  return {
    reporter,
    start() {
      void reporter.ensureNode().finally(() => {
        if (stopped) return;
        watch = startDeclarationWatch({
          client: opts.client,
          node: opts.node,
          reach: opts.reach,
          logger: opts.logger,
          onDeclaration: opts.onDeclaration,
          onListed: (obj) => reporter.compareStored(obj),
          clock,
          ...(opts.backoff ? { backoff: opts.backoff } : {}),
          ...(opts.watchIdleTimeoutMs ? { idleTimeoutMs: opts.watchIdleTimeoutMs } : {}),
        });
        tick();
      });
    },
    async stop() {
      stopped = true;
      if (timer !== undefined) clock.clearTimeout(timer);
      await watch?.stop();
      await beating;
      await reporter.idle();
    },
  };
}
