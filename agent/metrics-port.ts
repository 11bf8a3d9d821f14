/**
 * Keeps the agent's metrics port stable across restarts of the same state directory. With the default
 * `--metrics-listen 127.0.0.1:0` every start took a new free port, so a URL someone copied from agent.json
 * (the local mesh's README does) went stale at the next restart. Asked for any port, the agent now asks first
 * for the one it served on last time (agent.json, written at every start), and takes a free one — with a log
 * line naming both — only when that one is taken. An explicit port is used as given.
 */
import type { Logger } from '../api/meta/logger.ts';
import { errnoCode } from '../api/meta/errno.ts';
import { formatHostPort, parseHostPort } from '../api/meta/host-port.ts';
import { readAgentInfo } from './agent-info.ts';
import { serveMetrics, type MetricsServer, type ServeMetricsOptions } from './metrics.ts';

/** The port of the metrics URL the last agent of `stateDir` recorded, when it served on `host`. */
async function previousPort(stateDir: string, host: string): Promise<number | undefined> {
  try {
    const url = new URL((await readAgentInfo(stateDir)).metrics ?? '');
    const port = Number(url.port);
    return url.hostname.replace(/^\[(.*)\]$/, '$1') === host && port > 0 ? port : undefined;
  } catch {
    return undefined;
  }
}

/** Serves the metrics (see the module comment): on the previous port when `listen` asks for port 0. */
export async function serveMetricsOnStablePort(
  opts: ServeMetricsOptions & { stateDir: string; logger: Logger },
): Promise<MetricsServer> {
  const { host, port } = parseHostPort(opts.listen);
  const previous = port === 0 ? await previousPort(opts.stateDir, host) : undefined;
  if (previous === undefined) return serveMetrics(opts);
  try {
    return await serveMetrics({ ...opts, listen: formatHostPort(host, previous) });
  } catch (e) {
    if (errnoCode(e) !== 'EADDRINUSE') throw e;
    const server = await serveMetrics(opts);
    opts.logger.info('Served metrics on a new port: the previous one was taken', {
      previousPort: previous,
      port: server.port,
    });
    return server;
  }
}
