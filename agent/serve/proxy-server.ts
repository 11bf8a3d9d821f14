/**
 * The agent's TLS terminator for its routes (what the HttpsProxy driver configures). One HTTPS and one
 * plain-HTTP listener per `listen:port`, shared by every route declared on them:
 * - HTTPS: the certificate is chosen by SNI (an unknown or missing name fails the handshake); requests go
 *   to the route's 127.0.0.1:port (proxy-forward.ts). A renewed certificate is a new secure context for the
 *   next handshake: no listener restarts.
 * - HTTP: `/.well-known/acme-challenge/{token}` for a served host is answered with the key authorization the
 *   control plane holds for that route's Certificate (issue 10 contract §3); everything else is redirected
 *   to https with 308 Permanent Redirect.
 * A route whose certificate is not held yet is served on plain HTTP only (that is how its first ACME
 * challenge is answered). A listener is opened with its first route and closed with its last.
 */
import { createServer as createHttpServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { Server } from 'node:net';
import { createSecureContext, type SecureContext } from 'node:tls';
import { forwardRequest, forwardUpgrade } from './proxy-forward.ts';
import type { Logger } from '../engine/types.ts';

/** One route as the listeners serve it. */
export interface ProxyRoute {
  host: string;
  port: number;
  certificate: string;
  /** The chain and key (PEM); absent until the certificate is held: then only plain HTTP serves the host. */
  cert?: string;
  key?: string;
  httpsPort: number;
  httpPort: number;
  listen: string;
  /** What the driver compares to know the route is current (spec and file hashes). */
  fingerprint: string;
}

/** Fetches the key authorization of a pending HTTP-01 challenge; undefined when there is none. */
export type ChallengeFetcher = (certificate: string, token: string) => Promise<string | undefined>;

/** The route table and its listeners. */
export interface ProxyServer {
  /** Adds or replaces the route of `route.host`, opening its listeners when needed (rejects when they cannot bind). */
  set(route: ProxyRoute): Promise<void>;
  get(host: string): ProxyRoute | undefined;
  /** Removes the route of `host`, closing listeners no route uses any more. */
  delete(host: string): Promise<void>;
  close(): Promise<void>;
}

interface Entry {
  route: ProxyRoute;
  context?: SecureContext;
}

const CHALLENGE = /^\/\.well-known\/acme-challenge\/([A-Za-z0-9_-]+)$/;

/** Creates the (empty) proxy; `fetchChallenge` asks the control plane for HTTP-01 key authorizations. */
export function createProxyServer(opts: { logger: Logger; fetchChallenge: ChallengeFetcher }): ProxyServer {
  const routes = new Map<string, Entry>();
  const listeners = new Map<string, Server>();
  const hostOf = (req: IncomingMessage): string => (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();

  function httpsListener(): Server {
    const server = createHttpsServer({
      SNICallback: (name, cb) => {
        const e = routes.get(name.toLowerCase());
        if (e?.context) cb(null, e.context);
        else cb(new Error(`no certificate for ${name}`));
      },
    });
    server.on('request', (req: IncomingMessage, res: ServerResponse) => {
      const sni = (req.socket as { servername?: string }).servername ?? '';
      const e = routes.get(sni.toLowerCase());
      if (!e) res.writeHead(421, { 'content-type': 'text/plain' }).end('misdirected request\n');
      else forwardRequest(req, res, e.route.port);
    });
    server.on('upgrade', (req: IncomingMessage, socket, head: Buffer) => {
      const e = routes.get(((req.socket as { servername?: string }).servername ?? '').toLowerCase());
      if (e) forwardUpgrade(req, socket as import('node:net').Socket, head, e.route.port);
      else socket.destroy();
    });
    return server;
  }

  function httpListener(): Server {
    return createHttpServer((req, res) => {
      const host = hostOf(req);
      const e = routes.get(host);
      const m = CHALLENGE.exec((req.url ?? '').split('?')[0] ?? '');
      if (m && e) return void answerChallenge(res, e.route, m[1]);
      if (!e) return void res.writeHead(404, { 'content-type': 'text/plain' }).end(`no route for ${host}\n`);
      const port = e.route.httpsPort === 443 ? '' : `:${e.route.httpsPort}`;
      res.writeHead(308, { location: `https://${e.route.host}${port}${req.url ?? '/'}` }).end();
    });
  }

  async function answerChallenge(res: ServerResponse, route: ProxyRoute, token: string): Promise<void> {
    try {
      const ka = await opts.fetchChallenge(route.certificate, token);
      if (ka === undefined) res.writeHead(404, { 'content-type': 'text/plain' }).end('no such challenge\n');
      else res.writeHead(200, { 'content-type': 'text/plain' }).end(ka);
      opts.logger.info('Answered ACME challenge', { host: route.host, token, found: ka !== undefined });
    } catch (e) {
      opts.logger.error('Failed to fetch ACME challenge', { host: route.host, token, error: (e as Error).message });
      res.writeHead(503, { 'content-type': 'text/plain' }).end('the control plane is unreachable\n');
    }
  }

  async function ensure(key: string, make: () => Server, listen: string, port: number): Promise<void> {
    if (listeners.has(key)) return;
    const server = make();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, listen, () => {
        server.off('error', reject);
        resolve();
      });
    });
    listeners.set(key, server);
    opts.logger.info('Opened route listener', { listener: key });
  }

  async function closeUnused(): Promise<void> {
    const used = new Set<string>();
    for (const { route: r } of routes.values())
      used.add(`https ${r.listen}:${r.httpsPort}`).add(`http ${r.listen}:${r.httpPort}`);
    for (const [key, server] of listeners) {
      if (used.has(key)) continue;
      listeners.delete(key);
      await closeServer(server);
      opts.logger.info('Closed route listener', { listener: key });
    }
  }

  return {
    async set(route) {
      const context =
        route.cert !== undefined && route.key !== undefined
          ? createSecureContext({ cert: route.cert, key: route.key })
          : undefined;
      await ensure(`https ${route.listen}:${route.httpsPort}`, httpsListener, route.listen, route.httpsPort);
      await ensure(`http ${route.listen}:${route.httpPort}`, httpListener, route.listen, route.httpPort);
      routes.set(route.host, { route, context });
      await closeUnused();
    },
    get: (host) => routes.get(host)?.route,
    async delete(host) {
      routes.delete(host);
      await closeUnused();
    },
    async close() {
      routes.clear();
      await closeUnused();
    },
  };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    (server as Server & { closeAllConnections?: () => void }).closeAllConnections?.();
    server.close(() => resolve());
  });
}
