/**
 * The command line of `mesh-agent`: usage text and parsing into `createAgent` options (node:util
 * parseArgs). A `UsageError` (api/meta/usage-error.ts) means exit code 2.
 */
import { parseArgs } from 'node:util';
import { loadMeshconfig } from '../api/client/meshconfig.ts';
import { parseDuration } from '../api/meta/duration.ts';
import { parseHostPort } from '../api/meta/host-port.ts';
import { UsageError } from '../api/meta/usage-error.ts';
import type { AgentOptions } from './agent.ts';
import { parseByteSize } from './logs/byte-size.ts';

/** The help text. */
export const USAGE = `Usage: mesh-agent run --state-dir DIR [flags]
       mesh-agent join --server URL --token TOKEN --ca-hash sha256:HEX [flags]   (see mesh-agent join --help)

Runs the node agent: keeps this machine in the state its Declaration says, from its own store,
whether or not the control plane answers.

Flags:
  --state-dir DIR             the agent's own directory: store, service pid files and logs (required)
  --name NODE                 this node's name (first start; stored afterwards)
  --config MESHCONFIG         the control plane's URL, CA and credential (first start; stored afterwards)
  --root DIR                  declared paths resolve under DIR (default /; stored at first start)
  --site SITE                 spec.site of the Node object, when the agent creates it
  --reconcile-interval DUR    reconcile this often, to correct drift (default 5s)
  --heartbeat-interval DUR    write the Node status this often (default 10s)
  --metrics-listen HOST:PORT  serve /metrics and /healthz there (default 127.0.0.1:0, a free port)
  --stop-services-on-exit     stop the supervised services on SIGTERM/SIGINT (default: leave them running)
  --log-buffer-size SIZE      service log lines kept on disk while the control plane is unreachable, at most;
                              the oldest are dropped first (default 16Mi; sizes: 512Ki, 16Mi, 1Gi)
  -h, --help                  show this help

Durations: 500ms, 5s, 1m30s, 1h.
`;

/** Parses the Go duration of flag `--flag` (`500ms`, `5s`, `1m30s`, `1h`) into milliseconds: at least 10ms. */
export function durationFlag(flag: string, text: string): number {
  let ms = NaN;
  try { ms = parseDuration(text); } catch { /* reported below */ }
  if (!(ms >= 10)) throw new UsageError(`--${flag} must be a duration of at least 10ms such as 500ms, 5s or 1m, not "${text}"`);
  return ms;
}

/** Parses the command line into agent options ('help' for --help). */
export function parseCommandLine(argv: string[]): AgentOptions | 'help' {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv, allowPositionals: true, strict: true,
      options: {
        'state-dir': { type: 'string' }, name: { type: 'string' }, config: { type: 'string' }, root: { type: 'string' },
        site: { type: 'string' }, 'reconcile-interval': { type: 'string' }, 'heartbeat-interval': { type: 'string' },
        'metrics-listen': { type: 'string' }, 'stop-services-on-exit': { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
        'log-buffer-size': { type: 'string' },
      },
    });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const { values: v, positionals } = parsed;
  if (v.help) return 'help';
  if (positionals.length !== 1 || positionals[0] !== 'run') {
    throw new UsageError(positionals.length === 0 ? 'missing command: mesh-agent run …' : `unknown command "${positionals.join(' ')}" (the commands are "run" and "join")`);
  }
  if (!v['state-dir']) throw new UsageError('--state-dir is required');
  if (v['metrics-listen'] !== undefined) {
    try { parseHostPort(v['metrics-listen']); } catch (e) { throw new UsageError(`--metrics-listen: ${(e as Error).message}`); }
  }
  let logBufferBytes;
  if (v['log-buffer-size'] !== undefined) {
    try { logBufferBytes = parseByteSize('log-buffer-size', v['log-buffer-size']); } catch (e) { throw new UsageError((e as Error).message); }
  }
  let connection;
  if (v.config !== undefined) {
    try { connection = loadMeshconfig(v.config); } catch (e) { throw new UsageError(`--config: ${(e as Error).message}`); }
  }
  return {
    stateDir: v['state-dir'],
    ...(v.name !== undefined ? { nodeName: v.name } : {}),
    ...(v.root !== undefined ? { root: v.root } : {}),
    ...(v.site !== undefined ? { site: v.site } : {}),
    ...(connection ? { connection } : {}),
    reconcileIntervalMs: durationFlag('reconcile-interval', v['reconcile-interval'] ?? '5s'),
    heartbeatIntervalMs: durationFlag('heartbeat-interval', v['heartbeat-interval'] ?? '10s'),
    metricsListen: v['metrics-listen'] ?? '127.0.0.1:0',
    stopServicesOnExit: v['stop-services-on-exit'] ?? false,
    ...(logBufferBytes !== undefined ? { logBufferBytes } : {}),
  };
}
