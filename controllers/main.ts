/**
 * `mesh-control-plane`: the control-plane process. Opens its store (checking it may serve it, and creating the
 * Mesh singleton when it has none: ensure-mesh.ts), creates or reuses its PKI and admin
 * credential (first-start.ts), serves the API, writes `DIR/admin.meshconfig`, and shuts down cleanly on
 * SIGTERM/SIGINT. Logs one JSON line per event on stderr; `{"msg":"Serving","url":…}` means ready.
 */
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createApp } from '../api/server/app.ts';
import { meshAccess } from '../api/server/access/mesh-access.ts';
import { controlPlanePaths, ensureControlPlaneFiles, writeAdminMeshconfig } from '../api/server/pki/first-start.ts';
import { listen } from '../api/server/listen.ts';
import { listenLocalSocket } from '../api/server/listen-unix.ts';
import { isLoopback, serverUrl } from '../api/server/pki/serving-names.ts';
import { openStore, storeLogTo } from '../api/store/index.ts';
import { createInProcessClient } from '../api/server/in-process-transport.ts';
import { loadMeshconfig } from '../api/client/meshconfig.ts';
import { addDeclarationAndAssignmentControllers } from './assignment-controller.ts';
import { checkControlPlaneNode } from './check-control-plane-node.ts';
import { ensureMesh } from './ensure-mesh.ts';
import { createEventTtlController } from './event-ttl-controller.ts';
import { createNodeController } from './node-controller.ts';
import { createRouteController } from './route-controller.ts';
import { createOverlayController } from './overlay-controller.ts';
import { createManager } from './runtime/manager.ts';
import { handleShutdownSignals } from './shutdown.ts';
import { restoreCommand } from './restore-command.ts';
import { createBackupService } from '../api/server/backup/backup-service.ts';
import { startBackupScheduler } from '../api/server/backup/backup-scheduler.ts';
import { createJsonLogger } from '../api/meta/logger.ts';
import { parseArgs, refusePositionals, unknownOption, type FlagSpec } from '../api/meta/flags.ts';
import { parseHostPort, type HostPort } from '../api/meta/host-port.ts';
import { EXIT_USAGE, UsageError } from '../api/meta/usage-error.ts';
import type { InflightLimits } from '../api/server/http/inflight.ts';
import { startLoopBatching } from '../api/server/http/loop-batching.ts';
import { ServingRenewal } from '../api/server/pki/serving-renewal.ts';
import { addCertificateControllers, certificateEndpoints } from './certificate-wiring.ts';
import { createUiEndpoints } from '../api/server/ui/ui-endpoints.ts';
import { loadSessionKey } from '../api/server/ui/ui-session.ts';
import { realClock } from '../api/meta/clock.ts';

const USAGE = `Usage: mesh-control-plane [--data-dir DIR] [--listen HOST:PORT] [--node NAME] [--san NAME]... [--restore] [--insecure-http]
                          [--max-requests-inflight N] [--max-watches-per-client N]
       mesh-control-plane restore FILE --data-dir DIR --node NAME [--admin-config MESHCONFIG] [--ca-pin PIN] [flags above]

Runs the meshctl control plane: the API server and its store. \`restore FILE\` first restores a verified backup
archive into the new data directory DIR (restore-command.ts), then serves it on this node (as --restore).

  --data-dir DIR      where the store, PKI, admin.meshconfig and service logs (logs/) live (default ./.meshctl/control-plane)
  --listen HOST:PORT  address to serve on (default 127.0.0.1:6443; port 0 picks a free port)
  --node NAME         the node this runs on (default: the host name); it refuses a store that declares
                      another control-plane node (meshctl init declares it)
  --san NAME          one more DNS name or IP address for the serving certificate (repeatable)
  --restore           serve a store that declares another node anyway: an explicit restore onto this
                      node, which then declares this node (and logs it)
  --insecure-http     serve plain HTTP instead of HTTPS (loopback addresses only; for development)
  --max-requests-inflight N   requests (not watches) served at once, a quarter of them per client (default 400,
                              as kube-apiserver); more wait for a slot (up to 10,000, 15 s each), then get 429
                              with Retry-After
  --max-watches-per-client N  watches one client (the admin, one node) may hold open; more get 429 (default 100)
  --admin-config MESHCONFIG   restore: keep the admin token of this meshconfig (checked against the backup);
                              without it the restored control plane makes a new admin token
  --ca-pin PIN        restore: refuse an archive whose CA pin is not PIN (sha256:…; default: the admin config's CA)
  -h, --help          show this help
`;

/** The parsed command line. */
interface Flags {
  /** `restore FILE`: the archive to restore into dataDir first. */
  restoreFile?: string;
  adminConfig?: string;
  caPin?: string;
  dataDir: string;
  host: string;
  port: number;
  insecureHttp: boolean;
  node: string;
  sans: string[];
  restore: boolean;
  inflight: Partial<InflightLimits>;
}

/** The flags (the help is USAGE). */
const FLAG_SPECS: FlagSpec[] = [
  { name: 'data-dir', type: 'string' },
  { name: 'listen', type: 'string' },
  { name: 'node', type: 'string' },
  { name: 'san', type: 'strings' },
  { name: 'insecure-http', type: 'boolean' },
  { name: 'restore', type: 'boolean' },
  { name: 'max-requests-inflight', type: 'string' },
  { name: 'max-watches-per-client', type: 'string' },
  { name: 'admin-config', type: 'string' },
  { name: 'ca-pin', type: 'string' },
  { name: 'help', short: 'h', type: 'boolean' },
];

function parseFlags(argv: string[]): Flags | 'help' {
  const args = parseArgs(argv, FLAG_SPECS, { unknownFlag: unknownOption });
  if (args.bool('help')) return 'help';
  const restoreFile = restorePositionals(args.positionals);
  if (!restoreFile) refusePositionals(args);
  if (restoreFile && (!args.str('data-dir') || !args.str('node')))
    throw new UsageError('restore needs --data-dir DIR (a new, empty directory) and --node NAME (this node)');
  let listen: HostPort;
  try {
    listen = parseHostPort(args.str('listen') ?? '127.0.0.1:6443', { defaultHost: '0.0.0.0' });
  } catch {
    throw new UsageError(`--listen must be HOST:PORT (e.g. 127.0.0.1:6443 or [::1]:6443), not "${args.str('listen')}"`);
  }
  const { host, port } = listen;
  const insecureHttp = args.bool('insecure-http');
  if (insecureHttp && !isLoopback(host)) {
    throw new UsageError(
      `--insecure-http serves plain HTTP and is allowed only on a loopback address (127.0.0.0/8, ::1, localhost), not "${host}"`,
    );
  }
  return {
    ...(restoreFile ? { restoreFile } : {}),
    ...optional({ adminConfig: args.str('admin-config'), caPin: args.str('ca-pin') }),
    dataDir: args.str('data-dir') ?? join('.meshctl', 'control-plane'),
    host,
    port,
    insecureHttp,
    node: args.str('node') ?? hostname().toLowerCase(),
    sans: args.list('san'),
    restore: args.bool('restore') || restoreFile !== undefined,
    inflight: inflightFlags(args.str('max-requests-inflight'), args.str('max-watches-per-client')),
  };
}

/** `restore FILE` → FILE; no positionals → undefined; anything else is a usage error. */
function restorePositionals(positionals: string[]): string | undefined {
  if (positionals.length === 0) return undefined;
  if (positionals[0] !== 'restore') return undefined;
  if (positionals.length !== 2) throw new UsageError('restore takes one archive: mesh-control-plane restore FILE …');
  return positionals[1];
}

/** The entries of `o` that are defined. */
function optional<T extends Record<string, string | undefined>>(o: T): Partial<Record<keyof T, string>> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<Record<keyof T, string>>;
}

/** `--max-requests-inflight` and `--max-watches-per-client`: positive integers; the per-client request share is a quarter. */
function inflightFlags(requests: string | undefined, watches: string | undefined): Partial<InflightLimits> {
  const count = (flag: string, v: string): number => {
    if (!/^[1-9]\d{0,8}$/.test(v)) throw new UsageError(`--${flag} must be a positive integer, not "${v}"`);
    return Number(v);
  };
  const out: Partial<InflightLimits> = {};
  if (requests !== undefined) {
    out.maxRequestsInflight = count('max-requests-inflight', requests);
    out.maxRequestsInflightPerClient = Math.max(1, Math.floor(out.maxRequestsInflight / 4));
  }
  if (watches !== undefined) out.maxWatchesPerClient = count('max-watches-per-client', watches);
  return out;
}

async function run(flags: Flags): Promise<void> {
  const logger = createJsonLogger();
  const shutdown = handleShutdownSignals(logger);
  if (flags.restoreFile) await restoreCommand({ ...flags, file: flags.restoreFile, logger });
  const store = await openStore({
    dir: join(flags.dataDir, 'store'),
    logger: storeLogTo(logger, { component: 'store' }),
  });
  shutdown.onStop(() => store.close());
  await checkControlPlaneNode({ store, node: flags.node, restore: flags.restore, logger })
    .then(() => ensureMesh(store, logger))
    .catch(async (e: unknown) => {
      await store.close();
      throw e;
    });
  const files = await ensureControlPlaneFiles({
    dataDir: flags.dataDir,
    listenHost: flags.host,
    extraSans: flags.sans,
    logger,
  });
  // The admin token, node credentials issued at join, the Node authorizer, /cluster-info and /join.
  const access = meshAccess({
    store,
    adminTokenSha256: files.adminTokenSha256,
    caPem: files.ca.certPem,
    listenerScheme: flags.insecureHttp ? 'http' : 'https',
    logger,
  });
  const certificates = certificateEndpoints(store);
  const metrics = { render: (): string => '' };
  const backups = createBackupService({ store, dataDir: flags.dataDir, logger });
  const app = createApp({
    store,
    ...access,
    certificates,
    backups,
    // The status page under /ui/; its session key is kept in the data dir, so sessions outlive a restart.
    ui: createUiEndpoints({
      key: loadSessionKey(flags.dataDir),
      adminTokenSha256: () => files.adminTokenSha256,
      clock: realClock,
      logger,
    }),
    metrics: () => metrics.render(),
    logsDir: join(flags.dataDir, 'logs'),
    inflight: flags.inflight,
    logger,
  });
  // Under a mesh's steady stream of heartbeats, the loop's turns are batched (api/server/http/loop-batching.ts).
  const batching = startLoopBatching({ requests: () => app.requests() });
  shutdown.onStop(() => batching.stop());
  const tls = flags.insecureHttp
    ? undefined
    : { cert: files.serving.certPem, key: files.serving.keyPem, ticketKeys: files.ticketKeys };
  const server = await listen({ app, host: flags.host, port: flags.port, logger, ...(tls ? { tls } : {}) });
  shutdown.onStop(() => server.close());
  // The serving certificate is renewed while this runs (30 days before it expires), into the listener.
  const renewal = new ServingRenewal({
    dataDir: flags.dataDir,
    ca: files.ca,
    serving: files.serving,
    apply: (s) => server.setTls({ cert: s.certPem, key: s.keyPem }),
    logger,
  });
  if (tls) renewal.start();
  shutdown.onStop(() => renewal.stop());
  const url = serverUrl(flags.host, server.port, flags.insecureHttp);
  // The API also on a local Unix socket, for meshctl on this machine (no TLS: api/server/listen-unix.ts).
  const local = await listenLocalSocket({ app, path: controlPlanePaths(flags.dataDir).socket, logger });
  if (local) shutdown.onStop(() => local.close());
  writeAdminMeshconfig(files, url, logger, local?.path);
  // The controllers talk to this API like any other client (Kubernetes-style), with the admin credential, through
  // the same handler — in process, without TLS or HTTP (api/server/in-process-transport.ts).
  const client = createInProcessClient({ app, config: loadMeshconfig(files.meshconfigPath) });
  const manager = createManager({ client, logger });
  const declarations = addDeclarationAndAssignmentControllers(manager);
  manager.add(createNodeController({ manager, heartbeats: access.leases, yieldTo: declarations.queue }));
  manager.add(createOverlayController({ manager }));
  manager.add(createEventTtlController({ manager }));
  manager.add(createRouteController({ manager }));
  const servingNotAfter = tls ? () => renewal.notAfter() : undefined;
  metrics.render = addCertificateControllers({ manager, endpoints: certificates, ca: files.ca, servingNotAfter });
  shutdown.onStop(() => client.close());
  shutdown.onStop(() => manager.stop());
  void manager.start();
  const scheduler = startBackupScheduler({ service: backups, store, logger });
  shutdown.onStop(() => scheduler.stop());
  logger.info('Serving', {
    url,
    port: server.port,
    socket: local?.path,
    meshconfig: files.meshconfigPath,
    dataDir: flags.dataDir,
  });
  shutdown.started();
}

async function main(argv: string[]): Promise<void> {
  let flags: Flags | 'help';
  try {
    flags = parseFlags(argv);
  } catch (e) {
    process.stderr.write(`mesh-control-plane: ${(e as Error).message}\n\n${USAGE}`);
    process.exit(EXIT_USAGE);
  }
  if (flags === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  try {
    await run(flags);
  } catch (e) {
    process.stderr.write(
      JSON.stringify({
        time: new Date().toISOString(),
        level: 'error',
        msg: 'Failed to start',
        error: (e as Error).message,
      }) + '\n',
    );
    process.exit(1);
  }
}

void main(process.argv.slice(2));
