/**
 * `GET /cluster-info` (anonymous): what a joining machine needs before it can verify anything —
 * `{ "ca": "<CA certificate PEM>", "server": "<URL>" }`. The joining agent fetches it over TLS without
 * verifying, hashes the CA's public key and compares it with its `--ca-hash` pin before it sends a token;
 * then it connects again, verifying the server against that CA. Nothing in it is secret.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TLSSocket } from 'node:tls';
import { sendJson } from '../http/respond.ts';

/** The body of `GET /cluster-info`. */
export interface ClusterInfo {
  /** The mesh CA's certificate (PEM). */
  ca: string;
  /** The URL this request reached the control plane at (a joining node uses its own `--server`). */
  server: string;
}

/** Options of `createClusterInfoHandler`. */
export interface ClusterInfoOptions {
  caPem: string;
  /** The URL to advertise; default: the scheme and Host header of the request. */
  serverUrl?: () => string | undefined;
  /**
   * The scheme of the control plane's TCP listener (default https), advertised for a request that came over the
   * local Unix socket (listen-unix.ts): the Host header it carries is the TCP listener's, never the socket's.
   */
  listenerScheme?: 'http' | 'https';
}

/** Creates the `GET /cluster-info` handler. */
export function createClusterInfoHandler(
  opts: ClusterInfoOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    // A Unix socket has no remote address; a TCP one without TLS is --insecure-http's.
    const local = req.socket.remoteAddress === undefined;
    const scheme = req.socket instanceof TLSSocket ? 'https' : local ? (opts.listenerScheme ?? 'https') : 'http';
    const server = opts.serverUrl?.() ?? `${scheme}://${req.headers.host ?? 'localhost'}`;
    const info: ClusterInfo = { ca: opts.caPem, server };
    sendJson(res, 200, info);
  };
}
