/**
 * What the agent's HTTPS listener does with a request once TLS is terminated, as Caddy or Traefik do for
 * one name: forward it to the route's local service on 127.0.0.1:port with X-Forwarded-For, -Proto and
 * -Host, stream both ways, and pass WebSocket (any `Upgrade`) connections through. A service that does
 * not answer gets 502 Bad Gateway.
 */
import { request, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';

/** The headers sent to the service: the client's, plus the X-Forwarded-* ones. */
export function forwardedHeaders(req: IncomingMessage, proto: 'https' | 'http'): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(req.headers)) if (v !== undefined) out[k] = v;
  const client = req.socket.remoteAddress ?? '';
  const prior = req.headers['x-forwarded-for'];
  out['x-forwarded-for'] = prior ? `${String(prior)}, ${client}` : client;
  out['x-forwarded-proto'] = proto;
  if (req.headers.host) out['x-forwarded-host'] = req.headers.host;
  return out;
}

/** Forwards one request to 127.0.0.1:port and streams the answer back. */
export function forwardRequest(req: IncomingMessage, res: ServerResponse, port: number): void {
  const upstream = request(
    { host: '127.0.0.1', port, method: req.method, path: req.url, headers: forwardedHeaders(req, 'https') },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
      answer.pipe(res);
    },
  );
  upstream.on('error', (e) => {
    if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`bad gateway: ${e.message}\n`);
    else res.destroy();
  });
  req.pipe(upstream);
}

/** Passes an `Upgrade` request (e.g. WebSocket) through to 127.0.0.1:port as a raw byte stream. */
export function forwardUpgrade(req: IncomingMessage, client: Socket, head: Buffer, port: number): void {
  const upstream = connect({ host: '127.0.0.1', port }, () => {
    const headers = forwardedHeaders(req, 'https');
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (const [k, v] of Object.entries(headers)) for (const one of [v].flat()) lines.push(`${k}: ${one}`);
    upstream.write(lines.join('\r\n') + '\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
  });
  const close = (): void => {
    upstream.destroy();
    client.destroy();
  };
  upstream.on('error', () => {
    if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
    close();
  });
  client.on('error', close);
}
