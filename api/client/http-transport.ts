/**
 * The HTTP(S) transport of the typed client: kept-alive connections, bearer auth, the server verified
 * against the configured CA, and every failure turned into an ApiError (a `Status` from the server, or
 * ServiceUnavailable when the control plane cannot be reached). A `429 TooManyRequests` is sent again after its
 * `Retry-After` (on the config's clock, lengthened by `retryJitter`), a bounded number of times, as client-go does, so that callers ride
 * through a storm: the server refused it before doing anything, so a retried write is not applied twice.
 * Plain requests go through the small HTTP/1.1 client of http1.ts over `node:tls` (or, on the control plane's machine,
 * its local Unix socket without TLS: connect.ts); only streams (watches, logs) load `node:https`, when first
 * opened, so that a one-shot `meshctl get` never pays for it. Streams use the local socket too (over `node:http`)
 * while the plain requests have not found it unusable, and go to the server URL when connecting to it fails.
 */
import type * as http from 'node:http';
import { createRequire } from 'node:module';
import { ApiError } from '../meta/api-error.ts';
import { jsonAnswer } from './answers.ts';
import { secureContextFor, tcpFirstHttpsAgent } from './connect.ts';
import { Http1Client, TCP_KEEPALIVE_MS, type Http1Answer } from './http1.ts';
import type { ClientConfig } from './types.ts';

/** One request: the path is relative to the server URL (e.g. `/apis/meshctl.dev/v1alpha1/nodes`). */
export interface TransportRequest {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  body?: unknown;
  contentType?: string;
  /** The Accept header (default `application/json`), e.g. a kubectl-style Table (`;as=Table;v=v1;g=meta.k8s.io`). */
  accept?: string;
  /** Long-running (watch): no timeout, the caller reads the response stream. */
  stream?: boolean;
}

/** node:https's or node:http's `request` and a keep-alive agent of the same module. */
interface StreamAgent {
  request: (opts: http.RequestOptions, cb: (res: http.IncomingMessage) => void) => http.ClientRequest;
  agent: http.Agent;
}

/** Errors of connecting to the local socket after which a stream goes to the server URL instead. */
const LOCAL_CONNECT_ERRORS = new Set(['ENOENT', 'ECONNREFUSED', 'EACCES', 'ENOTSOCK', 'ENOTDIR', 'EPERM']);

/** Marks an error the client made up because the server could not be reached (see `isUnreachable`). */
const UNREACHABLE = 'Unreachable';

/** True when `e` is the client's "control plane unreachable" error (not a 503 sent by a server). */
export function isUnreachable(e: unknown): boolean {
  return e instanceof ApiError && e.details?.causes?.[0]?.reason === UNREACHABLE;
}

/** Sends requests to one control plane over kept-alive connections. */
export class HttpTransport {
  private readonly url: URL;
  /** The URL's host name without the brackets of an IPv6 address. */
  private readonly hostname: string;
  private readonly plain: Http1Client;
  /** node:https's (or node:http's) keep-alive agent for streams, made when the first one is opened. */
  private agent?: StreamAgent;
  /** node:http's keep-alive agent for streams over the local socket (no TLS), made when the first one is opened. */
  private localAgent?: StreamAgent;
  private readonly cfg: ClientConfig;

  constructor(opts: { config: ClientConfig }) {
    this.cfg = opts.config;
    try {
      this.url = new URL(opts.config.server);
    } catch {
      throw new ApiError({
        reason: 'BadRequest',
        message: `invalid server URL "${opts.config.server}" in the meshconfig`,
      });
    }
    if (this.url.protocol !== 'https:' && this.url.protocol !== 'http:') {
      throw new ApiError({
        reason: 'BadRequest',
        message: `unsupported server URL "${opts.config.server}": expected https:// or http://`,
      });
    }
    this.hostname = this.url.hostname.replace(/^\[(.*)\]$/, '$1');
    this.plain = new Http1Client({
      protocol: this.url.protocol,
      hostname: this.hostname,
      port: Number(this.url.port) || (this.url.protocol === 'https:' ? 443 : 80),
      ca: opts.config.caData,
      timeoutMs: opts.config.timeoutMs ?? 30_000,
      ...(opts.config.connectTimeoutMs ? { connectTimeoutMs: opts.config.connectTimeoutMs } : {}),
      ...(opts.config.maxConnections ? { maxSockets: opts.config.maxConnections } : {}),
      ...(opts.config.socketPath ? { socketPath: opts.config.socketPath } : {}),
    });
  }

  /** Sends a request and resolves with the parsed JSON body of a 2xx answer; rejects with ApiError. */
  json(req: TransportRequest): Promise<unknown> {
    return jsonAnswer(this.cfg, () => this.#plain(req));
  }

  /** Sends a plain request through http1.ts. */
  async #plain(req: TransportRequest): Promise<Http1Answer> {
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const headers = this.#headers(req, body);
    const path = this.url.pathname.replace(/\/$/, '') + req.path;
    let res: Http1Answer;
    try {
      res = await this.plain.request({ method: req.method, path, headers, body });
    } catch (e) {
      throw this.unreachable(e);
    }
    return res;
  }

  #headers(req: TransportRequest, body: string | undefined): Record<string, string | number> {
    const headers: Record<string, string | number> = {
      accept: req.accept ?? 'application/json',
      'user-agent': 'meshctl-client',
    };
    if (this.cfg.token) headers.authorization = `Bearer ${this.cfg.token}`;
    if (body !== undefined) {
      headers['content-type'] = req.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(body);
    }
    return headers;
  }

  /** The stream agent and its `request` (node:https's or node:http's), loaded on first use. */
  #streamAgent(): StreamAgent {
    if (this.agent) return this.agent;
    const load = createRequire(import.meta.url);
    if (this.url.protocol !== 'https:') {
      const { Agent, request } = load('node:http') as typeof import('node:http');
      return (this.agent = { request, agent: new Agent({ keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_MS }) });
    }
    const { request } = load('node:https') as typeof import('node:https');
    // The TLS context shared by every connection to this CA (given `ca`, node:https would make one per connection).
    const secureContext = secureContextFor(this.cfg.caData);
    return (this.agent = {
      request,
      agent: tcpFirstHttpsAgent({ keepAlive: true, keepAliveMsecs: TCP_KEEPALIVE_MS, secureContext }),
    });
  }

  /** node:http's keep-alive agent for streams over the local socket, loaded on first use (never node:https). */
  #localStreamAgent(): StreamAgent {
    if (this.localAgent) return this.localAgent;
    const { Agent, request } = createRequire(import.meta.url)('node:http') as typeof import('node:http');
    return (this.localAgent = { request, agent: new Agent({ keepAlive: true }) });
  }

  /**
   * Sends a request and resolves with the response once its headers arrived (any status code): for streams
   * (watches, logs), over node:https. A kept-alive socket that the server closed while idle fails with ECONNRESET
   * before the request reached it; such a request is sent once more on a fresh connection (Node's documented pattern).
   */
  send(req: TransportRequest, retryReused = true): Promise<http.IncomingMessage> {
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const socketPath = this.plain.socketPath;
    const { request, agent } = socketPath ? this.#localStreamAgent() : this.#streamAgent();
    return new Promise((resolve, reject) => {
      const r = request(
        {
          ...(socketPath
            ? { socketPath }
            : { protocol: this.url.protocol, hostname: this.hostname, port: this.url.port || undefined }),
          path: this.url.pathname.replace(/\/$/, '') + req.path,
          method: req.method,
          headers: this.#headers(req, body),
          agent,
        },
        resolve,
      );
      r.on('error', (e: NodeJS.ErrnoException) => {
        if (retryReused && r.reusedSocket && e.code === 'ECONNRESET') resolve(this.send(req, false));
        else if (socketPath && !r.reusedSocket && LOCAL_CONNECT_ERRORS.has(e.code ?? '')) {
          // The socket is gone, refused or not ours: the server URL gives the same answers.
          this.plain.forgetSocket();
          resolve(this.send(req, retryReused));
        } else reject(this.unreachable(e));
      });
      if (!req.stream) {
        const ms = this.cfg.timeoutMs ?? 30_000;
        r.setTimeout(ms, () =>
          r.destroy(Object.assign(new Error(`no answer within ${ms / 1000}s`), { code: 'ETIMEDOUT' })),
        );
      }
      r.end(body);
    });
  }

  /** Closes idle keep-alive connections (open watches are closed by their owners). */
  close(): void {
    this.plain.close();
    this.agent?.agent.destroy();
    this.localAgent?.agent.destroy();
  }

  /** Turns a socket/TLS error into ServiceUnavailable naming the server. */
  unreachable(e: unknown): ApiError {
    if (e instanceof ApiError) return e;
    const err = e as NodeJS.ErrnoException;
    const code = err.code ?? '';
    const at = `the control plane at ${this.cfg.server}`;
    let message = `${at} is unreachable (${err.message})`;
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') {
      message = `${at} is unreachable: its certificate is not valid for "${this.url.hostname}" (${err.message})`;
    } else if (/CERT|SIGNATURE|ISSUER/.test(code)) {
      message = `${at} is unreachable: its certificate did not verify against the configured CA (${err.message})`;
    } else if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'EPROTO') {
      message = `${at} is unreachable: the TLS handshake failed; is it serving plain HTTP? (${err.message})`;
    }
    return new ApiError({
      reason: 'ServiceUnavailable',
      message,
      details: { causes: [{ reason: UNREACHABLE, message: code || err.message }] },
    });
  }
}
