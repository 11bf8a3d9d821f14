/**
 * Everything the agent writes to the control plane: its Node (created when missing), the Node's status
 * heartbeat, the Declaration status (through `/status`, JSON merge patch), and the outbox of events.
 * Writes are skipped while the control plane is known to be unreachable (the heartbeat and the watch
 * probe it); when it returns, the status is written again if it changed meanwhile or the control plane's copy
 * (seen in the watch's list) is not the last one written, and the outbox is flushed.
 * No method throws: failures are recorded in the reachability tracker or logged.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Client } from '../../api/client/types.ts';
import { ApiError } from '../../api/meta/api-error.ts';
import { realClock, type Clock, type TimerHandle } from '../../api/meta/clock.ts';
import { findCondition } from '../../api/meta/conditions.ts';
import { API_VERSION, type Condition } from '../../api/meta/types.ts';
import type { Declaration, DeclarationStatus } from '../../api/v1alpha1/generated/declaration.ts';
import type { Event as MeshEvent } from '../../api/v1alpha1/generated/event.ts';
import type { Node } from '../../api/v1alpha1/generated/node.ts';
import type { Logger } from '../engine/types.ts';
import type { AgentStore } from '../store/agent-store.ts';
import { declarationStatus, type RunSummary } from './declaration-status.ts';
import type { Reachability } from './reachability.ts';

/** What the reporter reads from the agent when it writes. */
export interface ReportState {
  declaration(): Declaration | undefined;
  run(): RunSummary | undefined;
  appliedGeneration(): number | undefined;
  /** The agent's part of Node.status.overlay (agent/overlay/overlay-status.ts); absent: not reported. */
  overlay?(): Promise<unknown>;
  /** The certificates the node holds (Node.status.certificates). */
  certificates?(): Array<{ name: string; notAfter: string }>;
}

/** Options of `createReporter`. */
export interface ReporterOptions {
  client: Client;
  node: string;
  site?: string;
  store: AgentStore;
  reach: Reachability;
  logger: Logger;
  agentVersion: string;
  state: ReportState;
  /** The timers of deferred acknowledgements (and, in createSync, the heartbeat's and the watch's). Default: the real clock. */
  clock?: Clock;
}

/**
 * How long the acknowledgement of a new generation waits for the apply's own report (`reportDeclaration(false,
 * ACK_DEFER_MS)`): an apply that ends sooner is reported in one status write that also acknowledges the
 * generation; a longer one is acknowledged after this, while it runs.
 */
export const ACK_DEFER_MS = 1000;

/** The agent's writer to the control plane. */
export interface Reporter {
  /** Creates the Node object when it does not exist. */
  ensureNode(): Promise<void>;
  /**
   * Writes the Declaration status if it changed since the last write (or `force`). With `deferMs`, not before
   * that many ms: a write made meanwhile carries the same status (the deferred one is then dropped), so a new
   * generation applied within `deferMs` costs one status write, not an acknowledgement and then the result.
   * A deferred write resolves at once.
   */
  reportDeclaration(force?: boolean, deferMs?: number): Promise<void>;
  /**
   * Takes the Declaration as the control plane holds it (from a list: after a restart or a restore): when its
   * status is not the one this agent last wrote, the status is written again. So contact that returns costs no
   * status write when the control plane kept it, and one when it lost it.
   */
  compareStored(decl: Declaration): Promise<void>;
  /**
   * Writes the Node status heartbeat — unless `skipWhenRenewed` and it would only repeat what the control plane
   * has (the last one's status but for the contact time and an applied generation the last Declaration status
   * written carried, which the Node controller copies to the Node), and another request of the agent was answered
   * since then (a log POST, a status write), which renewed the node's lease on the control plane as a heartbeat
   * does (api/server/access/node-leases.ts `contact`). Resolves false when it skipped the write, true otherwise
   * (written or tried).
   */
  heartbeat(opts?: { skipWhenRenewed?: boolean }): Promise<boolean>;
  /** Creates an Event for each outbox item, removing each once delivered. */
  flushOutbox(): Promise<void>;
  /** Resolves once no write is in flight (for shutdown). */
  idle(): Promise<void>;
}

const isCode = (e: unknown, code: number): boolean => e instanceof ApiError && e.code === code;

/** Creates the reporter. */
export function createReporter(opts: ReporterOptions): Reporter {
  const { client, node, logger, reach } = opts;
  let written: string | undefined;
  /** The uid and status of the last write (what the control plane holds unless it lost it). */
  let writtenStatus: { uid?: string; status: DeclarationStatus } | undefined;
  let conditions: Condition[] = [];
  let chain: Promise<void> = Promise.resolve();
  let flushing: Promise<void> | undefined;
  const clock = opts.clock ?? realClock;
  let deferred: TimerHandle | undefined;
  /**
   * The last heartbeat written: its status without the contact time and the applied generation, that generation,
   * and reach.lastAnswered() once it was answered.
   */
  let lastBeat: { status: string; applied: number | undefined; answered: number | undefined } | undefined;

  /** Runs a call, recording reachability; resolves undefined (logged) on failure. */
  async function call<T>(what: string, fn: () => Promise<T>, quiet?: (e: unknown) => boolean): Promise<T | undefined> {
    try {
      const out = await fn();
      reach.succeeded();
      return out;
    } catch (e) {
      if (reach.failed(e)) return undefined;
      reach.succeeded();
      if (!quiet?.(e)) logger.error(`Failed to ${what}`, { node, error: (e as Error).message });
      return undefined;
    }
  }

  async function writeDeclarationStatus(force: boolean): Promise<void> {
    const decl = opts.state.declaration();
    if (!decl || reach.reachable() === false) return;
    const status = declarationStatus({
      decl,
      run: opts.state.run(),
      appliedGeneration: opts.state.appliedGeneration(),
      previous: conditions,
      now: new Date().toISOString(),
    });
    conditions = status.conditions ?? [];
    const text = JSON.stringify([decl.metadata.uid, status]);
    if (!force && text === written) return;
    const ok = await call(
      'write Declaration status',
      () => client.patch('declarations', node, { status }, { subresource: 'status' }),
      (e) => isCode(e, 404),
    );
    if (ok) {
      written = text;
      writtenStatus = { uid: decl.metadata.uid, status };
      logger.info('Reported Declaration status', {
        node,
        generation: status.observedGeneration,
        appliedGeneration: status.appliedGeneration,
        ready: findCondition(status.conditions, 'Ready')?.status,
      });
    }
  }

  async function ensureNode(): Promise<void> {
    const exists = await call(
      'read Node',
      () => client.get('nodes', node).then(() => true),
      (e) => isCode(e, 404),
    );
    if (exists || reach.reachable() === false) return;
    const obj: Node = {
      apiVersion: API_VERSION,
      kind: 'Node',
      metadata: { name: node },
      spec: opts.site ? { site: opts.site } : {},
    };
    const created = await call(
      'create Node',
      () => client.create('nodes', obj),
      (e) => isCode(e, 409),
    );
    if (created) logger.info('Created Node', { node, site: opts.site });
  }

  // The heartbeat: a new controlPlaneLastContact on every call is what the control plane's Node controller
  // notices. lastSeen and declaration.desiredGeneration are the control plane's to write (its clock, its
  // Declaration), so the agent writes neither.
  async function heartbeat(beat: { skipWhenRenewed?: boolean } = {}): Promise<boolean> {
    const now = new Date().toISOString();
    const applied = opts.state.appliedGeneration();
    const declaration = applied !== undefined ? { appliedGeneration: applied } : {};
    const overlay = await opts.state.overlay?.().catch((e: unknown) => {
      logger.error('Failed to read overlay status', { node, error: (e as Error).message });
      return undefined;
    });
    const certificates = opts.state.certificates?.();
    const reported = { ...(overlay ? { overlay } : {}), ...(certificates ? { certificates } : {}) };
    // The agent version is the process's: it never differs from the last heartbeat's.
    const same = JSON.stringify(reported);
    if (beat.skipWhenRenewed && lastBeat?.status === same && knows(applied, lastBeat.applied)) {
      const renewed = (reach.lastAnswered() ?? -Infinity) > (lastBeat.answered ?? Infinity);
      if (renewed && reach.reachable() === true) return false;
    }
    const status = { controlPlaneLastContact: now, agentVersion: opts.agentVersion, declaration, ...reported };
    const send = (): Promise<unknown> => client.patch('nodes', node, { status }, { subresource: 'status' });
    let missing = false;
    let sent = await call('write Node heartbeat', send, (e) => (missing = isCode(e, 404)));
    if (sent === undefined && missing) {
      await ensureNode();
      sent = await call('write Node heartbeat', send);
    }
    lastBeat = sent === undefined ? undefined : { status: same, applied, answered: reach.lastAnswered() };
    return true;
  }

  /**
   * Whether the control plane has the applied generation `applied` from this agent: the last heartbeat carried it
   * (`beaten`), or the last Declaration status written did, on the Declaration the agent holds — the Node controller
   * copies it from there to the Node (controllers/node-controller.ts), so an apply costs no heartbeat of its own.
   */
  function knows(applied: number | undefined, beaten: number | undefined): boolean {
    if (applied === beaten) return true;
    const last = writtenStatus;
    return (
      applied !== undefined &&
      last?.status.appliedGeneration === applied &&
      last.uid === opts.state.declaration()?.metadata.uid
    );
  }

  async function flushOnce(): Promise<void> {
    for (const item of opts.store.outbox()) {
      if (reach.reachable() === false) return;
      const event: MeshEvent = {
        apiVersion: API_VERSION,
        kind: 'Event',
        metadata: { generateName: `${node}-` },
        involvedObject: { apiVersion: API_VERSION, ...item.involvedObject },
        type: item.type,
        reason: item.reason,
        message: item.message,
        count: 1,
        firstTimestamp: item.time,
        lastTimestamp: item.time,
        source: { component: 'mesh-agent', host: node },
      };
      try {
        await client.create('events', event);
        reach.succeeded();
      } catch (e) {
        if (reach.failed(e)) return;
        logger.error('Dropped undeliverable event', { node, reason: item.reason, error: (e as Error).message });
      }
      await opts.store.dequeue(item.name);
    }
  }

  /** Queues a status write behind the one in flight; it supersedes a deferred one. */
  function writeSoon(force: boolean): Promise<void> {
    if (deferred !== undefined) clock.clearTimeout(deferred);
    deferred = undefined;
    chain = chain
      .then(() => writeDeclarationStatus(force))
      .catch((e: unknown) => logger.error('Failed to report Declaration status', { node, error: String(e) }));
    return chain;
  }

  return {
    ensureNode,
    reportDeclaration(force = false, deferMs = 0) {
      if (force || deferMs <= 0) return writeSoon(force);
      deferred ??= clock.setTimeout(() => void writeSoon(false), deferMs);
      return Promise.resolve();
    },
    compareStored(decl) {
      const last = writtenStatus;
      if (last === undefined || decl.metadata.uid !== last.uid) return Promise.resolve();
      if (isDeepStrictEqual(decl.status, last.status)) return Promise.resolve();
      written = undefined;
      writtenStatus = undefined;
      return writeSoon(false);
    },
    heartbeat,
    flushOutbox() {
      flushing ??= flushOnce()
        .catch((e: unknown) => logger.error('Failed to flush outbox', { node, error: String(e) }))
        .finally(() => {
          flushing = undefined;
        });
      return flushing;
    },
    async idle() {
      if (deferred !== undefined) await writeSoon(false);
      await chain;
      await flushing;
    },
  };
}
