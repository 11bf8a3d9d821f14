/**
 * Ships the node's service logs to the control plane (`POST …/nodes/<node>/logs`). Two loops:
 *
 * - collect, every `pollMs`: new lines from every service log (tailer.ts) go into the on-disk buffer
 *   (log-buffer.ts), and only then are the tailer's positions persisted;
 * - send: the oldest buffered lines, up to `batchBytes` per POST, in order; a batch leaves the buffer
 *   only when the control plane acknowledged it. On failure the lines stay and the batch is retried with
 *   backoff (250 ms doubling to 5 s), at once when contact returns.
 *
 * When the buffer had to drop lines, the next POST says so (the control plane marks the gap in each
 * service's log) and, once it was delivered, a Warning Event `LogsDropped` is queued; the totals are the
 * metrics `meshagent_log_dropped_{lines,bytes}_total`.
 */
import { join } from 'node:path';
import { isUnreachable } from '../../api/client/http-transport.ts';
import type { Transport } from '../../api/client/http-client.ts';
import { ApiError } from '../../api/meta/api-error.ts';
import { Backoff, realClock, sleep, type Clock, type TimerHandle } from '../../api/meta/clock.ts';
import { logsPath, type LogPost } from '../../api/wire/log-wire.ts';
import type { Logger } from '../engine/types.ts';
import type { Reachability } from '../sync/reachability.ts';
import {
  DEFAULT_LOG_BUFFER_BYTES,
  openLogBuffer,
  type Batch,
  type LogBuffer,
  type ServiceDrops,
} from './log-buffer.ts';
import { dropsMessage, shipperMetrics } from './shipper-report.ts';
import { openTailer, type Tailer } from './tailer.ts';

/** Options of `openLogShipper`. */
export interface LogShipperOptions {
  /** The agent's state directory: service logs in `logs/`, the shipper's own files in `log-shipper/`. */
  stateDir: string;
  node: string;
  /**
   * The agent's connection to the control plane: its client's transport, so that log POSTs share the kept-alive
   * connection of its heartbeats instead of holding one more per agent on the control plane (its owner closes it).
   */
  transport: Transport;
  reach: Pick<Reachability, 'succeeded' | 'failed' | 'onReturn'>;
  logger: Logger;
  /** Queues a Warning Event about this node for the control plane (the agent's outbox). */
  report(event: { type: 'Warning'; reason: string; message: string }): Promise<void>;
  /** The buffer's bound. Default 16 MiB. */
  bufferBytes?: number;
  /** How often service logs are read. Default 250 ms. */
  pollMs?: number;
  /** Bytes of buffered lines per POST at most. Default 256 KiB. */
  batchBytes?: number;
  backoff?: { initialMs?: number; maxMs?: number };
  /** The poll and retry timers. Default: the real clock. */
  clock?: Clock;
}

/** The running shipper. */
export interface LogShipper {
  start(): void;
  /**
   * Stops both loops and closes the buffer (lines not yet delivered stay on disk). A POST in flight is awaited:
   * close the transport first to end it at once (the agent closes its client before).
   */
  stop(): Promise<void>;
  /** Its metrics, in the Prometheus text format. */
  metrics(): string;
}

type Outcome = 'idle' | 'sent' | 'failed';

/** Opens the buffer and positions and creates the shipper; `start()` runs it. */
export async function openLogShipper(opts: LogShipperOptions): Promise<LogShipper> {
  const dir = join(opts.stateDir, 'log-shipper');
  const limit = opts.bufferBytes ?? DEFAULT_LOG_BUFFER_BYTES;
  const buffer = await openLogBuffer({ dir: join(dir, 'buffer'), limitBytes: limit, logger: opts.logger });
  const tailer = await openTailer({
    logsDir: join(opts.stateDir, 'logs'),
    positionsPath: join(dir, 'positions.json'),
    logger: opts.logger,
  });
  return new Shipper(opts, buffer, tailer, limit);
}

class Shipper implements LogShipper {
  readonly #o: LogShipperOptions;
  readonly #buffer: LogBuffer;
  readonly #tailer: Tailer;
  readonly #limit: number;
  readonly #transport: Transport;
  readonly #clock: Clock;
  #stopped = false;
  #timer: TimerHandle | undefined;
  #collecting: Promise<void> = Promise.resolve();
  #sending: Promise<void> = Promise.resolve();
  #wake: { reason: 'data' | 'retry'; fn: () => void } | undefined;
  #shipped = 0;
  #failing = '';
  #collectError = '';

  constructor(opts: LogShipperOptions, buffer: LogBuffer, tailer: Tailer, limit: number) {
    this.#o = opts;
    this.#buffer = buffer;
    this.#tailer = tailer;
    this.#limit = limit;
    this.#transport = opts.transport;
    this.#clock = opts.clock ?? realClock;
    opts.reach.onReturn(() => this.#wakeUp('retry'));
  }

  start(): void {
    this.#tick();
    this.#sending = this.#sendLoop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#wakeUp('retry');
    await this.#collecting;
    await this.#sending;
    await this.#buffer.close();
  }

  metrics(): string {
    return shipperMetrics({
      dropped: this.#buffer.dropped(),
      pendingBytes: this.#buffer.pendingBytes(),
      shipped: this.#shipped,
    });
  }

  #tick(): void {
    if (this.#stopped) return;
    this.#collecting = this.#collect()
      .then(() => {
        this.#collectError = '';
      })
      .catch((e: unknown) => {
        if (String(e) !== this.#collectError)
          this.#o.logger.error('Failed to buffer service logs', { node: this.#o.node, error: String(e) });
        this.#collectError = String(e);
      })
      .finally(() => {
        if (!this.#stopped) this.#timer = this.#clock.setTimeout(() => this.#tick(), this.#o.pollMs ?? 250);
      });
  }

  async #collect(): Promise<void> {
    const polled = await this.#tailer.poll();
    if (polled.entries.length) {
      const quiet = this.#buffer.unreported().length > 0;
      const d = await this.#buffer.append(polled.entries);
      if (d.lines > 0 && !quiet) {
        this.#o.logger.error('Dropped oldest buffered log lines', {
          node: this.#o.node,
          lines: d.lines,
          bytes: d.bytes,
          limitBytes: this.#limit,
        });
      }
      this.#wakeUp('data');
    }
    await polled.commit();
  }

  async #sendLoop(): Promise<void> {
    const backoff = new Backoff({ baseMs: this.#o.backoff?.initialMs ?? 250, maxMs: this.#o.backoff?.maxMs ?? 5000 });
    while (!this.#stopped) {
      const outcome = await this.#sendOnce().catch((e: unknown): Outcome => {
        this.#o.logger.error('Failed to ship logs', { node: this.#o.node, error: String(e) });
        return 'failed';
      });
      if (outcome === 'sent') backoff.reset();
      else if (outcome === 'idle') await this.#sleep('data', 5000);
      else await this.#sleep('retry', backoff.next());
    }
  }

  async #sendOnce(): Promise<Outcome> {
    const batch = await this.#buffer.peek(this.#o.batchBytes ?? 256 * 1024);
    if (!batch) return 'idle';
    if (batch.entries.length === 0) {
      await this.#buffer.ack(batch);
      return 'sent';
    }
    const drops = this.#buffer.unreported();
    const body: LogPost = {
      stream: batch.stream,
      entries: batch.entries.map((e) => ({ seq: e.seq, service: e.service, time: e.time, line: e.line })),
      ...(drops.length ? { dropped: drops } : {}),
    };
    try {
      await this.#transport.json({ method: 'POST', path: logsPath(this.#o.node), body });
    } catch (e) {
      return this.#refused(e, batch);
    }
    this.#o.reach.succeeded();
    this.#failing = '';
    await this.#delivered(batch, drops);
    return 'sent';
  }

  async #delivered(batch: Batch, drops: ServiceDrops): Promise<void> {
    await this.#buffer.ack(batch);
    this.#shipped += batch.entries.length;
    if (!drops.length) return;
    await this.#buffer.markReported(drops);
    await this.#o.report({ type: 'Warning', reason: 'LogsDropped', message: dropsMessage(drops, this.#limit) });
  }

  /**
   * A failed POST: unreachable → retry; a refused batch (400, 413, or 403: e.g. the node is at its quota of
   * services with logs) is dropped so it cannot block the rest.
   */
  async #refused(e: unknown, batch: Batch): Promise<Outcome> {
    if (isUnreachable(e) && this.#o.reach.failed(e)) return 'failed';
    if (this.#stopped) return 'failed';
    this.#o.reach.succeeded();
    const code = e instanceof ApiError ? e.code : 0;
    const message = (e as Error).message;
    if (code === 400 || code === 403 || code === 413) {
      this.#o.logger.error('Dropped log lines the control plane refused', {
        node: this.#o.node,
        lines: batch.entries.length,
        error: message,
      });
      await this.#buffer.ack(batch);
      return 'sent';
    }
    if (this.#failing !== message) this.#o.logger.error('Failed to ship logs', { node: this.#o.node, error: message });
    this.#failing = message;
    return 'failed';
  }

  async #sleep(reason: 'data' | 'retry', ms: number): Promise<void> {
    if (this.#stopped) return;
    const nap = sleep(this.#clock, ms);
    this.#wake = { reason, fn: nap.cancel };
    await nap.promise;
    this.#wake = undefined;
  }

  /** Ends a sleep: new data ends only an idle wait; a retry (contact returned, stop) ends any. */
  #wakeUp(reason: 'data' | 'retry'): void {
    if (this.#wake && (reason === 'retry' || this.#wake.reason === 'data')) this.#wake.fn();
  }
}
