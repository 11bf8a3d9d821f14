/**
 * Renews the control plane's serving certificate while the process runs (first-start.ts renews it only at
 * start-up): `SERVING_RENEW_BEFORE_MS` (30 days) before its notAfter it issues a new one from the mesh CA with
 * the same names, writes `pki/server.crt` and `pki/server.key` atomically, and hands it to `apply` — the TLS
 * listener's `setTls` (listen.ts: `setSecureContext`), so new connections get it without a restart. A failure
 * is logged and retried an hour later. The timer never sleeps more than a day at once (Node's timers cannot
 * wait longer than 24.8 days), and runs on an injectable clock, so tests move time instead of waiting.
 */
import { writeFileAtomicSync } from '../../meta/atomic-file.ts';
import { realClock, type Clock, type TimerHandle } from '../../meta/clock.ts';
import { silentLogger, type Logger } from '../../meta/logger.ts';
import { controlPlanePaths, SERVING_RENEW_BEFORE_MS } from './first-start.ts';
import { certInfo, issueServingCert, type CertAndKey } from './pki.ts';

const DAY_MS = 24 * 3_600_000;
const RETRY_MS = 3_600_000;

/** Options of `ServingRenewal`. */
export interface ServingRenewalOptions {
  /** The control plane's data directory (where pki/server.{crt,key} are rewritten). */
  dataDir: string;
  ca: CertAndKey;
  /** The serving certificate in use now. */
  serving: CertAndKey;
  /** Puts a renewed certificate into use (the listener's setTls). */
  apply: (serving: CertAndKey) => void;
  /** Lifetime of a renewed certificate (default 365 days). */
  lifetimeMs?: number;
  clock?: Clock;
  logger?: Logger;
}

/** Keeps the serving certificate renewed while the process runs; `start()` it after listening. */
export class ServingRenewal {
  private readonly opts: ServingRenewalOptions;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private serving: CertAndKey;
  /**
   * The current certificate's notAfter (ms), parsed once per certificate: the admin's `/metrics` reads it at every
   * scrape, and parsing the certificate cost ~3 ms of the control plane's CPU each time.
   */
  private servingNotAfter: number;
  private timer: TimerHandle | undefined;
  private stopped = false;

  constructor(opts: ServingRenewalOptions) {
    this.opts = opts;
    this.clock = opts.clock ?? realClock;
    this.logger = opts.logger ?? silentLogger;
    this.serving = opts.serving;
    this.servingNotAfter = certInfo(opts.serving.certPem).notAfter.getTime();
  }

  /** The end of the current serving certificate's validity (ms), for the recovery clock. */
  notAfter(): number {
    return this.servingNotAfter;
  }

  /** When the current certificate is due for renewal (ms). */
  dueAt(): number {
    return this.notAfter() - SERVING_RENEW_BEFORE_MS;
  }

  /** Starts the timer. */
  start(): void {
    this.schedule(this.dueAt() - this.clock.now());
  }

  /** Stops the timer. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
  }

  private schedule(inMs: number): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => void this.tick(), Math.max(0, Math.min(inMs, DAY_MS)));
  }

  private async tick(): Promise<void> {
    const now = this.clock.now();
    if (now < this.dueAt()) return this.schedule(this.dueAt() - now);
    try {
      await this.renew();
      this.schedule(this.dueAt() - this.clock.now());
    } catch (e) {
      this.logger.error('Failed to renew serving certificate', { error: (e as Error).message, retryInMs: RETRY_MS });
      this.schedule(RETRY_MS);
    }
  }

  private async renew(): Promise<void> {
    const { dnsNames, ipAddresses } = certInfo(this.serving.certPem);
    const next = await issueServingCert({
      ca: this.opts.ca,
      dnsNames,
      ipAddresses,
      commonName: 'meshctl-control-plane',
      nowMs: this.clock.now(),
      lifetimeMs: this.opts.lifetimeMs ?? 365 * DAY_MS,
    });
    const p = controlPlanePaths(this.opts.dataDir);
    writeFileAtomicSync(p.key, next.keyPem, { mode: 0o600 });
    writeFileAtomicSync(p.cert, next.certPem, { mode: 0o644 });
    this.opts.apply(next);
    const before = this.notAfter();
    this.serving = next;
    this.servingNotAfter = certInfo(next.certPem).notAfter.getTime();
    this.logger.info('Renewed serving certificate', {
      previousNotAfter: new Date(before).toISOString(),
      notAfter: new Date(this.notAfter()).toISOString(),
    });
  }
}
