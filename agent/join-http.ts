/**
 * The two HTTPS requests of a join, with node:https only: `GET /cluster-info` WITHOUT verifying the server
 * (the node cannot yet: it learns the CA from the answer and checks it against its pin), and `POST /join`
 * verifying the server against that CA. Failures become a JoinError whose message says what to do.
 */
import { request } from 'node:https';
import type { IncomingMessage } from 'node:http';

/** A failed join step, with a message meant for the person running `mesh-agent join`. */
export class JoinError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JoinError';
  }
}

/** One request of the join. */
export interface JoinRequestOptions {
  server: string;
  method: 'GET' | 'POST';
  path: string;
  body?: unknown;
  /** Verify the server against this CA (PEM); absent: do not verify (cluster-info only). */
  ca?: string;
  timeoutMs?: number;
}

/** What came back. */
export interface JoinResponse {
  status: number;
  json: unknown;
}

/** Sends one request; rejects with JoinError when the control plane cannot be reached or the TLS check fails. */
export function joinRequest(opts: JoinRequestOptions): Promise<JoinResponse> {
  const url = new URL(opts.path, opts.server);
  const body = opts.body === undefined ? undefined : JSON.stringify(opts.body);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        protocol: 'https:',
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || 443,
        path: url.pathname,
        method: opts.method,
        headers: {
          accept: 'application/json',
          'user-agent': 'mesh-agent-join',
          ...(body ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } : {}),
        },
        agent: false,
        ...(opts.ca ? { ca: opts.ca, rejectUnauthorized: true } : { rejectUnauthorized: false }),
      },
      (res) => {
        readJson(res).then(resolve, reject);
      },
    );
    req.setTimeout(opts.timeoutMs ?? 15_000, () =>
      req.destroy(
        Object.assign(new Error(`no answer within ${(opts.timeoutMs ?? 15_000) / 1000}s`), { code: 'ETIMEDOUT' }),
      ),
    );
    req.on('error', (e: NodeJS.ErrnoException) => reject(connectionError(opts, e)));
    req.end(body);
  });
}

async function readJson(res: IncomingMessage): Promise<JoinResponse> {
  res.setEncoding('utf8');
  let text = '';
  for await (const chunk of res) text += chunk as string;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode ?? 0, json };
}

function connectionError(opts: JoinRequestOptions, e: NodeJS.ErrnoException): JoinError {
  const code = e.code ?? '';
  if (opts.ca && (/CERT|SIGNATURE|ISSUER/.test(code) || code === 'ERR_TLS_CERT_ALTNAME_INVALID')) {
    return new JoinError(
      `the control plane at ${opts.server} presented a certificate that the pinned CA does not vouch for ` +
        `(${e.message}); the join token was not sent. Use an address its certificate names (mesh-control-plane --san).`,
    );
  }
  if (code === 'EPROTO' || code === 'ERR_SSL_WRONG_VERSION_NUMBER') {
    return new JoinError(
      `the TLS handshake with ${opts.server} failed (${e.message}); is it a meshctl control plane serving HTTPS?`,
    );
  }
  return new JoinError(
    `cannot reach the control plane at ${opts.server} (${e.message}). Joining needs the control plane: ` +
      'it issues and checks join tokens. Nodes that already joined keep running without it; try again once it is up.',
  );
}
