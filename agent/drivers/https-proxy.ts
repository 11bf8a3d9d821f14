/**
 * The `HttpsProxy` driver: makes the agent's proxy (agent/serve/proxy-server.ts) serve one route's host
 * with the certificate and key files declared before it. Observation reads those files (under the root)
 * and compares their hash and the spec with what the proxy serves, so a renewed certificate written by
 * the File driver is a diff and `apply` loads it: the next handshake uses it, no listener restarts. The
 * proxy lives in the agent process, so after an agent restart every route observes absent and is set again.
 * Until both files exist the host is served on plain HTTP only — its first ACME HTTP-01 challenge needs that
 * before any certificate exists — and the resource fails saying so (retried; new material retries it at once).
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { HttpsProxySpec } from '../../api/v1alpha1/generated/host-resource.ts';
import { WaitingError, type Change, type Driver, type Observed, type ResourceContext } from '../engine/types.ts';
import type { ProxyRoute, ProxyServer } from '../serve/proxy-server.ts';
import { resolveUnderRoot } from './resolve-under-root.ts';
import { errnoCode } from '../../api/meta/errno.ts';

/** What the driver sees: whether the proxy serves the host, and with what. */
export interface HttpsProxyObserved extends Observed {
  /** The fingerprint the proxy serves the host with. */
  serving?: string;
  /** The fingerprint of the spec and the files as they are now. */
  wanted?: string;
  /** Whether the certificate and key files exist. */
  held?: boolean;
}

/** The defaults of the spec's optional fields. */
function withDefaults(spec: HttpsProxySpec): Required<HttpsProxySpec> {
  return { httpsPort: 443, httpPort: 80, listen: '0.0.0.0', ...spec };
}

type Files = { cert: string; key: string } | undefined;

/** The certificate and key as the File resources wrote them; undefined while either is missing. */
async function readFiles(spec: HttpsProxySpec, ctx: ResourceContext): Promise<Files> {
  const read = async (path: string): Promise<string | undefined> => {
    try {
      return await readFile(await resolveUnderRoot(ctx.root, path), 'utf8');
    } catch (e) {
      if (errnoCode(e) === 'ENOENT') return undefined;
      throw e;
    }
  };
  const [cert, key] = [await read(spec.certFile), await read(spec.keyFile)];
  return cert !== undefined && key !== undefined ? { cert, key } : undefined;
}

function fingerprint(spec: HttpsProxySpec, files: Files): string {
  return createHash('sha256')
    .update(JSON.stringify([withDefaults(spec), files?.cert ?? null, files?.key ?? null]))
    .digest('hex');
}

/** Creates the driver over the agent's proxy. */
export function createHttpsProxyDriver(proxy: ProxyServer): Driver<HttpsProxySpec, HttpsProxyObserved> {
  return {
    kind: 'HttpsProxy',
    key: (spec) => `host:${spec.host}`,

    async observe(spec, ctx) {
      const serving = proxy.get(spec.host)?.fingerprint;
      const files = await readFiles(spec, ctx);
      const wanted = fingerprint(spec, files);
      return { exists: serving !== undefined, ...(serving ? { serving } : {}), wanted, held: files !== undefined };
    },

    diff(spec, observed) {
      if (!observed.exists) return [{ field: 'host', message: `${spec.host} is not served` }];
      const changes: Change[] = [];
      if (!observed.held) changes.push({ field: 'certFile', message: `${spec.certFile} is not held yet` });
      if (observed.serving !== observed.wanted)
        changes.push({ field: 'certFile', message: `${spec.host}: the certificate, key or ports changed` });
      return changes;
    },

    async apply(spec, ctx) {
      const files = await readFiles(spec, ctx);
      const route: ProxyRoute = { ...withDefaults(spec), ...files, fingerprint: fingerprint(spec, files) };
      await proxy.set(route);
      if (!files) {
        throw new WaitingError(
          `${spec.certFile} or ${spec.keyFile} does not exist yet: ${spec.host} is served on http only (ACME challenges, redirects) until its certificate is held`,
        );
      }
      ctx.logger.info('Served route', { id: ctx.id, host: spec.host, port: spec.port, httpsPort: route.httpsPort });
    },

    async remove(spec, ctx) {
      await proxy.delete(spec.host);
      ctx.logger.info('Stopped serving route', { id: ctx.id, host: spec.host });
    },
  };
}
