/**
 * The `Service` driver: dispatches on `spec.driver` to the `process` driver (the agent supervises the
 * process; the schema's default when `driver` is absent) or the `systemd` driver (unit file +
 * systemctl). Applying with one driver first removes whatever the other driver may have running under
 * the same id, so switching drivers never leaves two copies of a service.
 */
import type { ServiceSpec } from '../../api/v1alpha1/generated/host-resource.ts';
import type { Driver } from '../engine/types.ts';
import type { ProcessSupervisor } from './process-types.ts';
import { createProcessServiceDriver } from './service-process.ts';
import { createSystemdServiceDriver, type SystemdDriverOptions } from './service-systemd.ts';

/** Options of the `Service` driver: the agent's process supervisor and the systemd driver's options. */
export interface ServiceDriverOptions extends SystemdDriverOptions {
  supervisor: ProcessSupervisor;
}

/** Creates the `Service` driver. */
export function createServiceDriver(opts: ServiceDriverOptions): Driver<ServiceSpec> {
  const impls: Record<NonNullable<ServiceSpec['driver']>, Driver<ServiceSpec>> = {
    process: createProcessServiceDriver({ supervisor: opts.supervisor }),
    systemd: createSystemdServiceDriver(opts),
  };
  const pick = (spec: ServiceSpec): Driver<ServiceSpec> => {
    const impl = impls[spec?.driver ?? 'process'];
    if (!impl)
      throw new Error(`Service spec.driver must be "process" or "systemd", got ${JSON.stringify(spec?.driver)}`);
    return impl;
  };
  return {
    kind: 'Service',
    key: (_spec, id) => `service:${id}`,
    observe: (spec, ctx, last) => pick(spec).observe(spec, ctx, last),
    diff: (spec, observed) => pick(spec).diff(spec, observed),
    async apply(spec, ctx, observed) {
      const impl = pick(spec);
      for (const other of Object.values(impls)) if (other !== impl) await other.remove(spec, ctx);
      await impl.apply(spec, ctx, observed);
    },
    remove: (spec, ctx) => pick(spec).remove(spec, ctx),
    owns: (spec, observed) => pick(spec).owns?.(spec, observed) ?? false,
  };
}
