/**
 * The recovery clock on the control plane: keeps Mesh.status.recoveryDeadline (the earliest notAfter of what
 * needs this control plane to renew it: every Certificate, its own serving certificate, the mesh CA),
 * recoveryDeadlineSetBy (which one) and outageBudgetSeconds (deadline − now) current. The computation is the
 * pure api/meta/recovery-clock.ts, shared with the agent and `meshctl status`. Node credentials never expire,
 * so they are not part of it.
 *
 * One key (`mesh`); any Certificate or Mesh change re-decides it. It writes when the deadline or what sets it
 * changed, or when the stored budget is a refresh interval (default a minute) or more off, and looks again
 * every refresh interval: the budget in the status is at most that stale. It also serves the control plane's
 * Prometheus metrics of certificates and the deadline (`metrics()`, served at the admin's `/metrics`).
 */
import { realClock, type Clock } from '../api/meta/clock.ts';
import { recoveryClock, type Expiring, type RecoveryClock } from '../api/meta/recovery-clock.ts';
import { rfc3339 } from '../api/meta/timestamp.ts';
import type { Certificate, MeshStatus } from '../api/v1alpha1/generated/index.ts';
import { createController, type Controller } from './runtime/controller.ts';
import { informersFor, type ControllerOptions } from './runtime/manager.ts';

/** Options of createRecoveryClockController. */
export interface RecoveryClockControllerOptions extends ControllerOptions {
  /** What else expires and needs this control plane (its serving certificate, the mesh CA), read at each reconcile. */
  extra?: () => Expiring[];
  /** How stale outageBudgetSeconds may get (default 60 s). */
  refreshMs?: number;
}

/** The controller and the Prometheus text of its view. */
export interface RecoveryClockController {
  controller: Controller;
  /** Prometheus text: certificate expiry and renewal times, the recovery deadline. */
  metrics(): string;
}

/** The Certificates as Expiring items (those with a notAfter in status). */
export function certificatesExpiring(certs: readonly Certificate[]): Expiring[] {
  return certs.flatMap((c) => {
    const notAfter = c.status?.notAfter ? Date.parse(c.status.notAfter) : NaN;
    return Number.isFinite(notAfter)
      ? [{ kind: 'Certificate' as const, name: c.metadata.name ?? '', node: c.spec.node, notAfter }]
      : [];
  });
}

/** Creates the recovery clock controller; add `.controller` to the manager. */
export function createRecoveryClockController(opts: RecoveryClockControllerOptions): RecoveryClockController {
  const { manager } = opts;
  const clock: Clock = opts.clock ?? realClock;
  const refreshMs = opts.refreshMs ?? 60_000;
  const caches = informersFor(manager, ['certificates', 'meshes']);
  const current = (): RecoveryClock =>
    recoveryClock([...certificatesExpiring(caches.certificates.list()), ...(opts.extra?.() ?? [])], clock.now());
  const reconciler = {
    async reconcile(): Promise<{ requeueAfter: number }> {
      const mesh = caches.meshes.get('mesh');
      if (mesh) {
        const status = nextMeshStatus(mesh.status ?? {}, current(), refreshMs);
        if (status) {
          await manager.client.updateStatus('meshes', { ...mesh, status });
          manager.logger.info('Updated recovery clock', {
            recoveryDeadline: status.recoveryDeadline,
            outageBudgetSeconds: status.outageBudgetSeconds,
            setBy: status.recoveryDeadlineSetBy,
          });
        }
      }
      return { requeueAfter: refreshMs };
    },
  };
  const controller = createController({
    name: 'recovery-clock',
    reconciler,
    clock,
    logger: manager.logger,
    sources: [
      { informer: caches.certificates, keys: () => ['mesh'] },
      { informer: caches.meshes, keys: () => ['mesh'] },
    ],
  });
  return { controller, metrics: () => renderMetrics(caches.certificates.list(), current()) };
}

/** The Mesh status with the clock's fields, or undefined when what is stored is current enough. */
export function nextMeshStatus(status: MeshStatus, c: RecoveryClock, refreshMs: number): MeshStatus | undefined {
  const { recoveryDeadline: _d, outageBudgetSeconds: budget, recoveryDeadlineSetBy: _s, ...rest } = status;
  const setBy = c.setBy
    ? { kind: c.setBy.kind, name: c.setBy.name, ...(c.setBy.node ? { node: c.setBy.node } : {}) }
    : undefined;
  const next: MeshStatus = {
    ...rest,
    ...(c.deadline !== undefined ? { recoveryDeadline: rfc3339(c.deadline) } : {}),
    ...(c.budgetSeconds !== undefined ? { outageBudgetSeconds: c.budgetSeconds } : {}),
    ...(setBy ? { recoveryDeadlineSetBy: setBy } : {}),
  };
  const same =
    next.recoveryDeadline === status.recoveryDeadline &&
    JSON.stringify(next.recoveryDeadlineSetBy) === JSON.stringify(status.recoveryDeadlineSetBy) &&
    (c.budgetSeconds === undefined) === (budget === undefined) &&
    Math.abs((c.budgetSeconds ?? 0) - (budget ?? 0)) * 1000 < refreshMs;
  return same ? undefined : next;
}

/** A Prometheus label value, escaped. */
const label = (v: string): string => v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** The control plane's certificate metrics in Prometheus text format. */
export function renderMetrics(certs: readonly Certificate[], c: RecoveryClock): string {
  const lines: string[] = [];
  const gauge = (name: string, help: string, samples: [string, number][]): void => {
    lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
    for (const [labels, v] of samples) lines.push(`${name}${labels} ${v}`);
  };
  const withStatus = (field: 'notAfter' | 'renewalTime'): [string, number][] =>
    certs.flatMap((x) => {
      const t = x.status?.[field] ? Date.parse(x.status[field]) : NaN;
      const labels = `{name="${label(x.metadata.name ?? '')}",node="${label(x.spec.node)}"}`;
      return Number.isFinite(t) ? [[labels, t / 1000] as [string, number]] : [];
    });
  gauge(
    'meshctl_certificate_expiration_timestamp_seconds',
    'The notAfter of each Certificate, in seconds since the epoch.',
    withStatus('notAfter'),
  );
  gauge(
    'meshctl_certificate_renewal_timestamp_seconds',
    'When each Certificate is due for renewal, in seconds since the epoch.',
    withStatus('renewalTime'),
  );
  gauge(
    'meshctl_recovery_deadline_timestamp_seconds',
    'The earliest notAfter of what needs the control plane to renew it: it must be back before then.',
    c.deadline !== undefined ? [['', c.deadline / 1000]] : [],
  );
  return lines.join('\n') + '\n';
}
