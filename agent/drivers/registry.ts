/**
 * The explicit driver registry: a plain map from host resource kind to its driver. Nothing registers
 * itself; a kind without an entry here (`WireGuard` when no key pair is given, as in engine tests, or `HttpsProxy`
 * in an agent built without a proxy) fails with a clear "no driver" result.
 */
import type { DriverRegistry } from '../engine/types.ts';
import type { ProxyServer } from '../serve/proxy-server.ts';
import { directoryDriver } from './directory.ts';
import { fileDriver } from './file.ts';
import { createHttpsProxyDriver } from './https-proxy.ts';
import { createServiceDriver, type ServiceDriverOptions } from './service.ts';
import { createWireGuardDriver, type WireGuardDriverOptions } from './wireguard.ts';

/** What the stateful drivers need: the agent's long-lived process supervisor, systemd options, the WireGuard key
 * and the route proxy. */
export type DriverRegistryOptions = ServiceDriverOptions & {
  wireguard?: WireGuardDriverOptions;
  /** The agent's TLS terminator for its routes (agent/serve/proxy-server.ts). */
  proxy?: ProxyServer;
};

/** Creates the map kind → driver the engine uses. */
export function createDriverRegistry(opts: DriverRegistryOptions): DriverRegistry {
  return {
    Directory: directoryDriver,
    File: fileDriver,
    Service: createServiceDriver(opts),
    ...(opts.wireguard ? { WireGuard: createWireGuardDriver(opts.wireguard) } : {}),
    ...(opts.proxy ? { HttpsProxy: createHttpsProxyDriver(opts.proxy) } : {}),
  };
}
