/**
 * The command line of `mesh-agent`: usage text and parsing into `createAgent` options (the shared flag
 * parser, api/meta/flags.ts). A `UsageError` (api/meta/usage-error.ts) means exit code 2.
 */
import { resolve } from 'node:path';
import { loadMeshconfig } from '../api/client/meshconfig.ts';
import { parseDuration } from '../api/meta/duration.ts';
import { parseArgs, unknownOption, type FlagSpec } from '../api/meta/flags.ts';
import { parseHostPort } from '../api/meta/host-port.ts';
import { UsageError } from '../api/meta/usage-error.ts';
import type { AgentOptions } from './agent.ts';
import { parseByteSize } from './logs/byte-size.ts';
import { rootError } from './root-dir.ts';

/** The help text. */
export const USAGE = `Usage: mesh-agent run --state-dir DIR [flags]
       mesh-agent join --server URL --token TOKEN --ca-hash sha256:HEX [flags]   (see mesh-agent join --help)
       mesh-agent reconcile --state-dir DIR   (the running agent retries every failed resource now; SIGHUP does too)
       mesh-agent set-server URL --state-dir DIR   (the control plane moved, e.g. a restore: see mesh-agent set-server --help)
       mesh-agent status --state-dir DIR      (the node's recovery clock, read from DIR alone)

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
  --metrics-listen HOST:PORT  serve /metrics and /healthz there (default 127.0.0.1:0: the port of the
                              last start of this state dir, else a free one)
  --wireguard-interface NAME  this machine's name for the declared WireGuard interface (default: the declared
                              wg-mesh); agents sharing a machine need their own (wireguard-go's sockets are shared)
  --stop-services-on-exit     stop the supervised services on SIGTERM/SIGINT (default: leave them running)
  --log-buffer-size SIZE      service log lines kept on disk while the control plane is unreachable, at most;
                              the oldest are dropped first (default 16Mi; sizes: 512Ki, 16Mi, 1Gi)
  -h, --help                  show this help

Durations: 500ms, 5s, 1m30s, 1h.
`;

/** Parses the Go duration of flag `--flag` (`500ms`, `5s`, `1m30s`, `1h`) into milliseconds: at least 10ms. */
export function durationFlag(flag: string, text: string): number {
  let ms = NaN;
  try {
    ms = parseDuration(text);
  } catch {
    /* reported below */
  }
  if (!(ms >= 10))
    throw new UsageError(`--${flag} must be a duration of at least 10ms such as 500ms, 5s or 1m, not "${text}"`);
  return ms;
}

/** The flags of `mesh-agent run` (the help is USAGE). */
const RUN_FLAGS: FlagSpec[] = [
  ...[
    'state-dir',
    'name',
    'config',
    'root',
    'site',
    'reconcile-interval',
    'heartbeat-interval',
    'metrics-listen',
    'log-buffer-size',
    'wireguard-interface',
  ].map((name): FlagSpec => ({ name, type: 'string' })),
  { name: 'stop-services-on-exit', type: 'boolean' },
  { name: 'help', short: 'h', type: 'boolean' },
];

/** Parses the command line into agent options ('help' for --help). */
export function parseCommandLine(argv: string[]): AgentOptions | 'help' {
  const args = parseArgs(argv, RUN_FLAGS, { unknownFlag: unknownOption });
  const positionals = args.positionals;
  const v = (name: string): string | undefined => args.str(name);
  if (args.bool('help')) return 'help';
  if (positionals.length !== 1 || positionals[0] !== 'run') {
    throw new UsageError(
      positionals.length === 0
        ? 'missing command: mesh-agent run …'
        : `unknown command "${positionals.join(' ')}" (the commands are "run", "join", "reconcile" and "status")`,
    );
  }
  const stateDir = v('state-dir');
  if (!stateDir) throw new UsageError('--state-dir is required');
  const metricsListen = v('metrics-listen');
  if (metricsListen !== undefined) {
    try {
      parseHostPort(metricsListen);
    } catch (e) {
      throw new UsageError(`--metrics-listen: ${(e as Error).message}`);
    }
  }
  let logBufferBytes;
  const logBufferSize = v('log-buffer-size');
  if (logBufferSize !== undefined) {
    try {
      logBufferBytes = parseByteSize('log-buffer-size', logBufferSize);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  }
  let connection;
  const config = v('config');
  if (config !== undefined) {
    try {
      connection = loadMeshconfig(config);
    } catch (e) {
      throw new UsageError(`--config: ${(e as Error).message}`);
    }
  }
  const [name, root, site, wgIf] = [v('name'), v('root'), v('site'), v('wireguard-interface')];
  if (wgIf !== undefined && !/^[A-Za-z0-9_=+.-]{1,15}$/.test(wgIf))
    throw new UsageError(`--wireguard-interface must be 1 to 15 letters, digits or '_=+.-', not "${wgIf}"`);
  const badRoot = root === undefined ? undefined : rootError(resolve(root), 'flag', stateDir);
  if (badRoot !== undefined) throw new UsageError(badRoot);
  return {
    stateDir,
    ...(name !== undefined ? { nodeName: name } : {}),
    ...(root !== undefined ? { root } : {}),
    ...(site !== undefined ? { site } : {}),
    ...(wgIf !== undefined ? { wireguardInterface: wgIf } : {}),
    ...(connection ? { connection } : {}),
    reconcileIntervalMs: durationFlag('reconcile-interval', v('reconcile-interval') ?? '5s'),
    heartbeatIntervalMs: durationFlag('heartbeat-interval', v('heartbeat-interval') ?? '10s'),
    metricsListen: metricsListen ?? '127.0.0.1:0',
    stopServicesOnExit: args.bool('stop-services-on-exit'),
    ...(logBufferBytes !== undefined ? { logBufferBytes } : {}),
  };
}
