/**
 * A raw HTTP(S) request helper and a watch-stream reader for tests, depending on nothing but Node: what a
 * client that is not ours sends (any body, any header), over kept-alive connections.
 */
import {
  Agent as HttpAgent,
  request as httpReq,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsReq } from 'node:https';
import type { ClientConfig } from '../api/client/types.ts';

/** A response, fully read. */
export interface HttpResult {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: any; // tests index freely into arbitrary responses
}

/** Keep-alive agents for `httpRequest` (TLS handshakes would dominate tests that make many requests). */
const keepAlive = { http: new HttpAgent({ keepAlive: true }), https: new HttpsAgent({ keepAlive: true }) };

/** Headers for a request: the admin token by default; a `null` value removes a header. */
function requestOptions(
  config: ClientConfig,
  method: string,
  path: string,
  headers: Record<string, string | null>,
  reuse = false,
): RequestOptions & { ca?: string } {
  const u = new URL(path, config.server);
  const h: Record<string, string> = config.token ? { authorization: `Bearer ${config.token}` } : {};
  for (const [k, v] of Object.entries(headers)) {
    if (v === null) delete h[k.toLowerCase()];
    else h[k.toLowerCase()] = v;
  }
  return {
    method,
    hostname: u.hostname.replace(/^\[|\]$/g, ''),
    port: u.port,
    path: u.pathname + u.search,
    headers: h,
    agent: reuse ? (u.protocol === 'https:' ? keepAlive.https : keepAlive.http) : false,
    ...(config.caData ? { ca: config.caData } : {}),
  };
}

function send(config: ClientConfig, opts: RequestOptions, body: Buffer | undefined): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    const req = (config.server.startsWith('https:') ? httpsReq : httpReq)(opts, resolve);
    req.on('error', reject);
    req.end(body);
  });
}

function encodeBody(body: unknown, headers: Record<string, string | null>): Buffer | undefined {
  if (body === undefined) return undefined;
  if (Buffer.isBuffer(body)) return body;
  if (typeof body === 'string') return Buffer.from(body);
  if (!Object.keys(headers).some((k) => k.toLowerCase() === 'content-type'))
    headers['content-type'] = 'application/json';
  return Buffer.from(JSON.stringify(body));
}

/** One raw HTTP(S) request against `config.server` over a kept-alive connection (objects are sent as JSON; strings and Buffers as they are). */
export async function httpRequest(
  config: ClientConfig,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string | null> = {},
): Promise<HttpResult> {
  const h = { ...headers };
  const buf = encodeBody(body, h);
  if (
    buf &&
    !Object.keys(h).some((k) => k.toLowerCase() === 'content-length' || k.toLowerCase() === 'transfer-encoding')
  ) {
    h['content-length'] = String(buf.length);
  }
  const res = await send(config, requestOptions(config, method, path, h, true), buf);
  const chunks: Buffer[] = [];
  for await (const c of res) chunks.push(c as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.statusCode ?? 0, headers: res.headers, text, json };
}

/** An open streaming response (a watch), read line by line. */
export interface EventStream {
  status: number;
  headers: IncomingHttpHeaders;
  /** The next non-blank line parsed as JSON; undefined once the stream ended; rejects after `timeoutMs`. */
  next(timeoutMs?: number): Promise<any>;
  /** Everything received so far, heartbeat newlines included. */
  raw(): string;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  close(): void;
}

/** Opens a streaming GET (e.g. `?watch=1`) with the admin token. */
export async function openStream(
  config: ClientConfig,
  path: string,
  headers: Record<string, string | null> = {},
): Promise<EventStream> {
  const res = await send(config, requestOptions(config, 'GET', path, headers), undefined);
  let raw = '';
  let pending = '';
  const lines: unknown[] = [];
  let waiter: (() => void) | undefined;
  let done = false;
  res.setEncoding('utf8');
  res.on('data', (d: string) => {
    raw += d;
    pending += d;
    let nl: number;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const line = pending.slice(0, nl).trim();
      pending = pending.slice(nl + 1);
      if (line) lines.push(JSON.parse(line));
    }
    waiter?.();
  });
  const ended = new Promise<void>((resolve) => {
    const finish = (): void => {
      done = true;
      waiter?.();
      resolve();
    };
    res.once('end', finish);
    res.once('close', finish);
    res.once('error', finish);
  });
  const next = async (timeoutMs = 5000): Promise<unknown> => {
    const deadline = Date.now() + timeoutMs;
    while (!lines.length && !done) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no watch event within ${timeoutMs} ms; received so far: ${raw.slice(-500)}`);
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((r) => {
        waiter = r;
        timer = setTimeout(r, left);
      });
      clearTimeout(timer);
      waiter = undefined;
    }
    return lines.shift();
  };
  return { status: res.statusCode ?? 0, headers: res.headers, next, raw: () => raw, ended, close: () => res.destroy() };
}
