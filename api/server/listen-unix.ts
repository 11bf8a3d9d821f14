/**
 * The API on a local Unix domain socket, beside the HTTPS listener (as Headscale's CLI, Docker and containerd
 * serve theirs): for `meshctl` run on the control plane's own machine, which then needs neither `node:tls` nor a
 * handshake (bench/RESULTS.md §3). Requests go through the same handler as over HTTPS — bearer token, authorization,
 * admission, limits —; only TLS is left out, because the kernel protects local IPC: the socket is mode 0600, owned
 * by the control plane's user, in a directory (mode 0700) only that user can enter. A socket file left by a killed
 * control plane (nothing accepts on it) is replaced; one that still accepts is another control plane's, and start-up
 * fails rather than take it over.
 */
import { chmodSync, lstatSync, mkdirSync, unlinkSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { errnoCode } from '../meta/errno.ts';
import type { Logger } from '../meta/logger.ts';
import type { App } from './app.ts';
import { closeServer, LISTEN_BACKLOG, prepareServer } from './listen.ts';

/**
 * The longest socket path the kernel takes (sun_path is 108 bytes with its NUL). A longer one is not served
 * (`socketPathUsable`), and the meshconfig does not name it.
 */
export const MAX_SOCKET_PATH_BYTES = 107;

/** Open connections at most on the socket: it serves the admin's commands on this machine, not the agents. */
export const UNIX_MAX_CONNECTIONS = 64;

/** True when `path` fits in a Unix socket address. */
export function socketPathUsable(path: string): boolean {
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES;
}

/** Options of `listenUnix`. */
export interface ListenUnixOptions {
  app: Pick<App, 'handle'>;
  /** Absolute path of the socket; its directory is created (0700) or made 0700. */
  path: string;
  logger?: Logger;
}

/** A listening socket; `close()` stops accepting, ends its connections and removes the socket file. */
export interface UnixListening {
  path: string;
  close(): Promise<void>;
}

/** Serves `app` on the Unix socket at `path` (mode 0600, in a 0700 directory of this user). */
export async function listenUnix(opts: ListenUnixOptions): Promise<UnixListening> {
  privateDirectory(dirname(opts.path));
  await removeStaleSocket(opts.path);
  const server = createServer(opts.app.handle);
  prepareServer(server, { maxConnections: UNIX_MAX_CONNECTIONS, ...(opts.logger ? { logger: opts.logger } : {}) });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ path: opts.path, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // The directory already keeps other users out; the mode says so on the socket itself too.
  chmodSync(opts.path, 0o600);
  return { path: opts.path, close: () => closeServer(server, { close: () => undefined }) };
}

/** Creates `dir` (0700) or, when it exists, checks that it is a directory of this user and makes it 0700. */
function privateDirectory(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory: cannot serve the local socket in it`);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid)
    throw new Error(`${dir} belongs to uid ${st.uid}, not to this user (${uid}): not serving the local socket in it`);
  if ((st.mode & 0o777) !== 0o700) chmodSync(dir, 0o700);
}

/**
 * Removes a socket file nobody accepts on (left by a SIGKILLed control plane). Throws when another process still
 * accepts on it, or when the path is something else than a socket (never deleted).
 */
async function removeStaleSocket(path: string): Promise<void> {
  let st;
  try {
    st = lstatSync(path);
  } catch (e) {
    if (errnoCode(e) === 'ENOENT') return;
    throw e;
  }
  if (!st.isSocket()) throw new Error(`${path} exists and is not a socket: not replacing it`);
  const accepted = await new Promise<boolean>((resolve) => {
    const probe = connect({ path });
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (accepted) throw new Error(`another process serves ${path} (a control plane on the same data directory?)`);
  unlinkSync(path);
}

/**
 * The control plane's local socket: served at `path` when it can be; otherwise the error is logged and undefined
 * returned (the HTTPS listener serves everything anyway, and the admin meshconfig then does not name the socket).
 */
export async function listenLocalSocket(
  opts: ListenUnixOptions & { logger: Logger },
): Promise<UnixListening | undefined> {
  const { path, logger } = opts;
  try {
    if (!socketPathUsable(path)) throw new Error(`the path is longer than ${MAX_SOCKET_PATH_BYTES} bytes`);
    const listening = await listenUnix(opts);
    logger.info('Opened local API socket', { path });
    return listening;
  } catch (e) {
    logger.error('Skipped local API socket', { path, error: (e as Error).message });
    return undefined;
  }
}
