/**
 * The stateless `Service` driver façade for `driver: process`: it maps a declared service onto the
 * long-lived process supervisor the agent holds (observe = the supervisor's status, apply = ensure,
 * remove = stop). A spec change shows as a different fingerprint and restarts the process.
 */
import { createHash } from 'node:crypto';
import type { ServiceSpec } from '../../api/v1alpha1/generated/host-resource.ts';
import type { Driver, Observed } from '../engine/types.ts';
import type { ProcessPhase, ProcessSupervisor } from './process-types.ts';
import { resolveDirUnderRoot } from './resolve-under-root.ts';

/** What the process driver sees: the supervisor's phase of the service and the spec it runs with. */
export interface ProcessServiceObserved extends Observed {
  phase?: ProcessPhase;
  pid?: number;
  fingerprint?: string;
  adopted?: boolean;
}

/** Checks a service spec's command and environment, throwing a clear error when malformed. */
export function checkServiceSpec(spec: ServiceSpec): void {
  if (!Array.isArray(spec?.command) || spec.command.length === 0 || !spec.command.every((a) => typeof a === 'string')) {
    throw new Error('Service spec.command must be a non-empty array of strings');
  }
  for (const [k, v] of Object.entries(spec.env ?? {})) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) || typeof v !== 'string')
      throw new Error(`Service spec.env.${k}: invalid name or non-string value`);
  }
}

/** A stable hash of what a running service depends on: command, env, working directory, restart policy. */
export function serviceFingerprint(spec: ServiceSpec): string {
  const env = Object.entries(spec.env ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const basis = [spec.command, env, spec.workingDirectory ?? null, spec.restart ?? 'always'];
  return createHash('sha256').update(JSON.stringify(basis)).digest('hex').slice(0, 32);
}

/** Creates the `process` service driver over the agent's supervisor. */
export function createProcessServiceDriver(opts: {
  supervisor: ProcessSupervisor;
}): Driver<ServiceSpec, ProcessServiceObserved> {
  const { supervisor } = opts;
  return {
    kind: 'Service',
    key: (_spec, id) => `service:${id}`,

    async observe(spec, ctx) {
      checkServiceSpec(spec);
      const st = await supervisor.inspect(ctx.id);
      if (!st || st.phase === 'stopping') return { exists: false };
      return { exists: true, phase: st.phase, pid: st.pid, fingerprint: st.fingerprint, adopted: st.adopted };
    },

    diff(spec, observed) {
      if (!observed.exists) return [{ field: 'process', message: 'service process is not running' }];
      if (observed.fingerprint !== serviceFingerprint(spec))
        return [{ field: 'spec', message: 'command, env, working directory or restart policy changed' }];
      return [];
    },

    async apply(spec, ctx) {
      checkServiceSpec(spec);
      const cwd =
        spec.workingDirectory === undefined ? ctx.root : await resolveDirUnderRoot(ctx.root, spec.workingDirectory);
      await supervisor.ensure(ctx.id, {
        command: spec.command,
        env: spec.env ?? {},
        cwd,
        root: ctx.root,
        restart: spec.restart ?? 'always',
        fingerprint: serviceFingerprint(spec),
      });
    },

    async remove(_spec, ctx) {
      await supervisor.stop(ctx.id);
    },

    /** A process the supervisor has a pid file for was started by this agent (its own state dir). */
    owns: (_spec, observed) => observed.exists,
  };
}
