/**
 * The Certificate controller: issues each Certificate with its issuer (spec.issuer, else the Mesh's: `internal`
 * signs with the mesh CA, `acme` orders from the Mesh's ACME CA over HTTP-01), keeps the material in the
 * control plane's store (CertificateVault: never in an API object), and renews it at its renewal time
 * (notAfter − renewBefore, default a third of the lifetime). The decisions are pure (certificate-status.ts).
 *
 * A failed attempt sets Ready=False with the CA's reason and message and records a Warning Event at once; the
 * next attempt waits an exponential backoff on status.failedAttempts (so a restart keeps it). Success records
 * a Normal `Issued` Event. It looks again exactly at the renewal time (requeueAfter, on its clock).
 *
 * The one controller that touches the store: through the vault only, because key material must never travel
 * through the API (the material endpoint serves it to the certificate's node alone). Everything else —
 * Certificates, the Mesh, status and Events — goes through the API like any other controller.
 */
import type { Client } from '../api/client/types.ts';
import { findCondition } from '../api/meta/conditions.ts';
import { realClock, type Clock } from '../api/meta/clock.ts';
import type { Logger } from '../api/meta/logger.ts';
import { API_VERSION } from '../api/meta/types.ts';
import { rfc3339 } from '../api/meta/timestamp.ts';
import type { CertificateVault } from '../api/server/certs/vault.ts';
import type { Certificate, CertificateStatus, Event } from '../api/v1alpha1/generated/index.ts';
import { isDeepStrictEqual } from 'node:util';
import { IssueError, type Issuer } from './certificate-issuers.ts';
import {
  DEFAULT_RETRY,
  ISSUING,
  failedStatus,
  issueReason,
  issuedStatus,
  issuerOf,
  issuingStatus,
  renewalAt,
  retryAt,
  type Failure,
  type Held,
  type RetryBackoff,
} from './certificate-status.ts';
import { createController, type Controller, type Reconciler, type Result } from './runtime/controller.ts';
import { informersFor, type ControllerOptions, type Informers } from './runtime/manager.ts';
import { onMeshSpecChange } from './render-inputs.ts';

/** Options of createCertificateController. */
export interface CertificateControllerOptions extends ControllerOptions {
  vault: CertificateVault;
  /** The issuers by name; a Certificate whose issuer is missing here fails with IssuerNotConfigured. */
  issuers: Partial<Record<'acme' | 'internal', Issuer>>;
  /** Backoff of failed attempts (default 30 s … 6 h). */
  retry?: RetryBackoff;
}

/** The informers the controller reads from. */
type Caches = Informers<'certificates' | 'meshes'>;

/** Creates the Certificate controller; add it to the manager, which starts it once the caches are synced. */
export function createCertificateController(opts: CertificateControllerOptions): Controller {
  const { manager } = opts;
  const clock = opts.clock ?? realClock;
  const caches: Caches = informersFor(manager, ['certificates', 'meshes']);
  const reconciler = new CertificateReconciler({
    client: manager.client,
    caches,
    logger: manager.logger,
    clock,
    vault: opts.vault,
    issuers: opts.issuers,
    retry: opts.retry ?? DEFAULT_RETRY,
  });
  return createController({
    name: 'certificate',
    reconciler,
    workers: opts.workers ?? 2,
    clock,
    logger: manager.logger,
    sources: [
      { informer: caches.certificates },
      // The issuer, renewBefore and ACME account are the Mesh's too: a change re-decides every certificate.
      // The issuer and renewal settings are the Mesh's spec; its status (the recovery clock's) decides nothing here.
      {
        informer: caches.meshes,
        keys: onMeshSpecChange(() => caches.certificates.list().map((c) => c.metadata.name ?? '')),
      },
    ],
  });
}

interface Deps {
  client: Client;
  caches: Caches;
  logger: Logger;
  clock: Clock;
  vault: CertificateVault;
  issuers: Partial<Record<'acme' | 'internal', Issuer>>;
  retry: RetryBackoff;
}

/** Reconciles one Certificate: issues or renews it when due, else keeps its status and looks again at renewal. */
class CertificateReconciler implements Reconciler {
  private readonly d: Deps;

  constructor(d: Deps) {
    this.d = d;
  }

  async reconcile(name: string): Promise<Result | void> {
    const cached = this.d.caches.certificates.get(name);
    if (!cached || cached.metadata.deletionTimestamp) return;
    const held = this.held(name);
    const decided = this.decide(cached, held);
    if (!decided.why && held) await this.syncStatus(cached, held);
    if (decided.result) return decided.result;
    // About to issue (for acme, a real order): decide again on a fresh read, as the cache may lag our own writes.
    const fresh = await this.d.client.get('certificates', name);
    const again = this.decide(fresh, held);
    if (again.result) return again.result;
    return this.attempt(fresh, again.why ?? 'NotIssued');
  }

  /**
   * Why `cert` must be issued (undefined: what is held is good until its renewal time), and a result when nothing
   * is to be done now: not due (look again at the renewal time), or due but a failed attempt is backing off.
   */
  private decide(cert: Certificate, held: Held | undefined): { result?: Result; why?: string } {
    const mesh = this.d.caches.meshes.get('mesh');
    const now = this.d.clock.now();
    const why = issueReason(cert, mesh, held, now);
    if (!why && held) return { result: { requeueAfter: Math.max(1, renewalAt(cert, mesh, held) - now) } };
    const retry = retryAt(cert.status, this.d.retry);
    if (retry !== undefined && now < retry) return { why, result: { requeueAfter: retry - now } };
    return { why: why ?? 'NotIssued' };
  }

  /** Writes the status of held material when it says otherwise (e.g. renewBefore changed in the Mesh). */
  private async syncStatus(cert: Certificate, held: Held): Promise<void> {
    const next = issuedStatus(cert, this.d.caches.meshes.get('mesh'), held, this.d.clock.now());
    if (!sameStatus(cert.status, next)) await this.d.client.updateStatus('certificates', { ...cert, status: next });
  }

  /** One issuance attempt: Issuing=True, then the material stored and Ready=True, or Ready=False and a Warning. */
  private async attempt(cert: Certificate, why: string): Promise<Result> {
    const { client, logger, clock } = this.d;
    const name = cert.metadata.name ?? '';
    const mesh = this.d.caches.meshes.get('mesh');
    const issuerName = issuerOf(cert, mesh);
    let current = cert;
    if (findCondition(cert.status?.conditions, ISSUING)?.status !== 'True') {
      current = await client.updateStatus('certificates', { ...cert, status: issuingStatus(cert, why, clock.now()) });
    }
    try {
      const issuer = this.d.issuers[issuerName];
      if (!issuer) throw new IssueError('IssuerNotConfigured', `this control plane has no ${issuerName} issuer`);
      const m = await issuer.issue(current);
      await this.d.vault.saveMaterial(current, m);
      const held = toHeld(m);
      const status = issuedStatus(current, mesh, held, clock.now());
      await client.updateStatus('certificates', { ...current, status });
      logger.info('Issued certificate', {
        certificate: name,
        issuer: issuerName,
        why,
        notAfter: m.notAfter,
        renewalTime: status.renewalTime,
      });
      await this.record(
        current,
        'Normal',
        'Issued',
        `issued by the ${issuerName} issuer (${why}), valid until ${m.notAfter}`,
      );
      return { requeueAfter: Math.max(1, renewalAt(current, mesh, held) - clock.now()) };
    } catch (e) {
      return this.failed(current, issuerName, e);
    }
  }

  /** Records a failed attempt: Ready=False with the CA's reason, a Warning Event, a retry after the backoff. */
  private async failed(cert: Certificate, issuerName: string, e: unknown): Promise<Result> {
    const { client, logger, clock } = this.d;
    const failure: Failure =
      e instanceof IssueError
        ? { reason: e.reason, message: e.message }
        : { reason: 'IssuanceFailed', message: e instanceof Error ? e.message : String(e) };
    const status = failedStatus(cert, failure, clock.now());
    const name = cert.metadata.name ?? '';
    logger.error('Failed to issue certificate', {
      certificate: name,
      issuer: issuerName,
      reason: failure.reason,
      message: failure.message,
      failedAttempts: status.failedAttempts,
    });
    await client.updateStatus('certificates', { ...cert, status });
    await this.record(cert, 'Warning', failure.reason, failure.message);
    return { requeueAfter: Math.max(1, (retryAt(status, this.d.retry) ?? clock.now()) - clock.now()) };
  }

  private held(name: string): Held | undefined {
    const m = this.d.vault.material(name);
    return m ? toHeld(m) : undefined;
  }

  /** Creates an Event about the Certificate; a failure to record it is logged, not retried. */
  private async record(cert: Certificate, type: 'Normal' | 'Warning', reason: string, message: string): Promise<void> {
    const now = rfc3339(this.d.clock.now());
    const name = cert.metadata.name ?? '';
    const event: Event = {
      apiVersion: API_VERSION,
      kind: 'Event',
      metadata: { generateName: `${name}.` },
      involvedObject: {
        apiVersion: API_VERSION,
        kind: 'Certificate',
        name,
        ...(cert.metadata.uid ? { uid: cert.metadata.uid } : {}),
      },
      type,
      reason,
      message: message.slice(0, 1000),
      count: 1,
      firstTimestamp: now,
      lastTimestamp: now,
      source: { component: 'certificate-controller' },
    };
    await this.d.client
      .create('events', event)
      .catch((e: unknown) =>
        this.d.logger.error('Failed to record Event', { certificate: name, reason, error: (e as Error).message }),
      );
  }
}

function toHeld(m: { notBefore: string; notAfter: string; issuer: 'acme' | 'internal'; dnsNames: string[] }): Held {
  return {
    notBefore: Date.parse(m.notBefore),
    notAfter: Date.parse(m.notAfter),
    issuer: m.issuer,
    dnsNames: m.dnsNames,
  };
}

/** Status equality ignoring nothing: conditions keep their transition times, so equal inputs give equal status. */
function sameStatus(a: CertificateStatus | undefined, b: CertificateStatus): boolean {
  return isDeepStrictEqual(a ?? {}, b);
}
