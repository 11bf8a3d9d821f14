/**
 * Puts an App on a TCP port: plain HTTP, or HTTPS with the given certificate (TLS 1.3 and TLS 1.2 AEAD
 * suites only). Port 0 picks a free port. Idle connections are kept 90 s (an agent's heartbeats reuse one); the
 * accept queue holds a mesh's reconnecting agents rather than dropping their SYNs (LISTEN_BACKLOG); the
 * open connections are bounded below the open-file limit, and a refused one is logged (connection-limit.ts).
 * Malformed HTTP (garbage bytes, oversized headers) is answered by Node's parser and the socket dropped.
 */
import { createServer as createHttpServer } from 'node:http';
import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Socket } from 'node:net';
import { formatHostPort } from '../meta/host-port.ts';
import type { Logger } from '../meta/logger.ts';
import type { App } from './app.ts';
import { connectionLimit, logRefusedConnections, openFileLimit } from './connection-limit.ts';

/** Options of `listen`. */
export interface ListenOptions {
  /** What listen needs of an App: its handler, and close() (which ends open watches). */
  app: Pick<App, 'handle' | 'close'>;
  host: string;
  port: number;
  /**
   * PEM certificate (chain) and key; absent for plain HTTP. `ticketKeys`: the key of the TLS session tickets (48
   * bytes, first-start.ts ensureTicketKeys), kept across restarts so that clients resume their sessions; default: a
   * new one per process, as Node makes.
   */
  tls?: { cert: string; key: string; ticketKeys?: Buffer };
  /** Open connections at most; more are closed at once and logged. Default: connectionLimit(openFileLimit()). */
  maxConnections?: number;
  /** Where refused connections are logged (default: nowhere). */
  logger?: Logger;
}

/** A listening server. */
export interface Listening {
  /** e.g. `https://127.0.0.1:6443` */
  url: string;
  port: number;
  /** Ends open watches, stops accepting, and resolves once every connection is closed. */
  close(): Promise<void>;
  /**
   * Replaces the TLS certificate and key for new connections (a renewed serving certificate); a no-op for HTTP. The
   * session ticket key stays: sessions issued before are still resumed.
   */
  setTls(tls: { cert: string; key: string }): void;
}

/**
 * The TLS versions and suites offered, as Mozilla's "intermediate" configuration without DHE: TLS 1.3
 * (all three suites), and TLS 1.2 with ECDHE key exchange and an AEAD cipher (AES-GCM, ChaCha20-Poly1305)
 * only. CBC suites (`ECDHE-ECDSA-AES256-SHA`, …) and anything older than TLS 1.2 are refused.
 */
export const TLS_SETTINGS = {
  minVersion: 'TLSv1.2',
  ciphers: [
    'TLS_AES_128_GCM_SHA256',
    'TLS_AES_256_GCM_SHA384',
    'TLS_CHACHA20_POLY1305_SHA256',
    'ECDHE-ECDSA-AES128-GCM-SHA256',
    'ECDHE-RSA-AES128-GCM-SHA256',
    'ECDHE-ECDSA-AES256-GCM-SHA384',
    'ECDHE-RSA-AES256-GCM-SHA384',
    'ECDHE-ECDSA-CHACHA20-POLY1305',
    'ECDHE-RSA-CHACHA20-POLY1305',
  ].join(':'),
} as const;

/**
 * How long a TLS session may be resumed, in seconds: 7 days, TLS 1.3's longest ticket lifetime, which Go's servers
 * (kube-apiserver's) also give. Node's default is 5 minutes, and an agent's session dates from when it opened its
 * connection, which it keeps for as long as the control plane runs: after a restart, only agents that had connected
 * within 5 minutes would have resumed. A resumed TLS 1.3 session still makes a new key exchange (forward secrecy).
 */
export const SESSION_TIMEOUT_S = 7 * 24 * 3600;
/**
 * The TLS session ID context: sessions are resumed only by a server of the same one. Node's default is a hash of the
 * process's command line, so a control plane restarted with other flags (another `--listen`, `--inflight`) would
 * refuse every session issued before, ticket key or not.
 */
export const SESSION_ID_CONTEXT = 'meshctl-api';

/**
 * How long a kept-alive connection may sit idle: longer than an agent's heartbeat interval (10 s by default), so
 * that each agent keeps one connection instead of a TLS handshake per heartbeat (Node's default is 5 s).
 */
export const KEEP_ALIVE_TIMEOUT_MS = 90_000;
/**
 * The accept queue's length: 4096, Linux's default net.core.somaxconn (which caps it). A SYN that finds the queue
 * full is dropped, and the client's kernel sends it again only after 1, 3, 7, 15, 31 s, while the control plane may
 * sit idle. A connection waits in the queue about LISTEN_BACKLOG / (connections accepted a second), up to ~60 s at
 * 70 a second: within an agent's two minutes for a new connection (agent/sync/sync.ts AGENT_CONNECTION; its watch
 * has no connect timeout), though not within the 30 s of a remote meshctl while a whole mesh reconnects (on the
 * control plane's machine meshctl uses the local socket). bench/herd-probe.ts at N = 5,000 (SIGKILL and restart):
 * with 1024 every Node was back after 87 and 99 s (163,088 listen overflows counted by the kernel in the second run),
 * with 4096 after 64 and 64 s (35,071), the control plane using a quarter less CPU. 4096 collapsed once, when the
 * agents gave up after 30 s and reconnected at the back of the queue (bench §9), before AGENT_CONNECTION.
 */
export const LISTEN_BACKLOG = 4096;

/**
 * ALPN: HTTP/1.1 when the client offers it, else the handshake fails with no_application_protocol, as Node's https
 * server does with its default `ALPNProtocols: ['http/1.1']`. Chosen by a callback because with the list Node gives
 * every connection its own copy of it, a few bytes that keep a whole 8 KiB slab of Buffer's pool alive each:
 * ~13 MiB at 10,000 connections (bench/RESULTS.md §9).
 */
export function selectHttp11({ protocols }: { protocols: string[] }): string | undefined {
  return protocols.includes('http/1.1') ? 'http/1.1' : undefined;
}

/** Starts serving `app` on host:port. */
export async function listen(opts: ListenOptions): Promise<Listening> {
  const handler = opts.app.handle;
  const sessions = {
    ...(opts.tls?.ticketKeys ? { ticketKeys: opts.tls.ticketKeys } : {}),
    sessionTimeout: SESSION_TIMEOUT_S,
    sessionIdContext: SESSION_ID_CONTEXT,
  };
  const https = opts.tls
    ? createHttpsServer(
        {
          cert: opts.tls.cert,
          key: opts.tls.key,
          ALPNCallback: selectHttp11,
          ...TLS_SETTINGS,
          ...sessions,
        },
        handler,
      )
    : undefined;
  const server: Server = https ?? createHttpServer(handler);
  prepareServer(server, opts);
  server.on('tlsClientError', () => {
    /* a failed handshake only concerns that client */
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: opts.port, host: opts.host, backlog: LISTEN_BACKLOG }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  return {
    url: `${opts.tls ? 'https' : 'http'}://${formatHostPort(opts.host, port)}`,
    port,
    close: () => closeServer(server, opts.app),
    setTls: (tls) => https?.setSecureContext({ cert: tls.cert, key: tls.key, ...TLS_SETTINGS, ...sessions }),
  };
}

/**
 * What every listener of the API does (TCP here, the local Unix socket in listen-unix.ts): keeps idle connections
 * KEEP_ALIVE_TIMEOUT_MS, bounds open connections (refusals logged), answers malformed HTTP and drops the socket.
 */
export function prepareServer(server: Server, opts: Pick<ListenOptions, 'maxConnections' | 'logger'>): void {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  const maxConnections = opts.maxConnections ?? connectionLimit(openFileLimit());
  if (maxConnections !== undefined) {
    server.maxConnections = maxConnections;
    server.on('drop', logRefusedConnections(opts.logger, maxConnections));
  }
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (socket.writable && !socket.destroyed && err.code !== 'ECONNRESET') {
      const code = err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : '400 Bad Request';
      socket.end(`HTTP/1.1 ${code}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
    }
    socket.destroy();
  });
}

/** Ends open watches, stops accepting, closes idle connections at once and the others after 2 s. */
export function closeServer(server: Server, app: Pick<App, 'close'>): Promise<void> {
  app.close();
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    // Requests still running get a moment to finish; then every connection is dropped.
    setTimeout(() => server.closeAllConnections(), 2000).unref();
  });
}
