/**
 * Minimal raw HTTP(S) helpers for the benchmarks: one JSON request, and a streaming NDJSON watch.
 * They use node:http/https directly so that what is timed is the wire, not a client library.
 */
import http from 'node:http';
import https from 'node:https';
import type { ClientConfig } from '../../api/client/types.ts';

/** An agent per config that never limits sockets (1,000 watches need 1,000 connections). */
export function makeAgent(config: ClientConfig): http.Agent {
  return config.server.startsWith('https:')
    ? new https.Agent({ keepAlive: true, maxSockets: Infinity, ...(config.caData ? { ca: config.caData } : {}) })
    : new http.Agent({ keepAlive: true, maxSockets: Infinity });
}

function send(
  config: ClientConfig,
  agent: http.Agent,
  method: string,
  path: string,
  headers: http.OutgoingHttpHeaders,
): http.ClientRequest {
  const url = new URL(path, config.server);
  const mod = url.protocol === 'https:' ? https : http;
  return mod.request(url, {
    method,
    agent,
    headers: {
      accept: 'application/json',
      ...(config.token ? { authorization: `Bearer ${config.token}` } : {}),
      ...headers,
    },
  });
}

/** Sends one request with an optional JSON body; resolves with the status and the parsed JSON reply. */
export function requestJson(
  config: ClientConfig,
  agent: http.Agent,
  method: string,
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = send(
      config,
      agent,
      method,
      path,
      payload ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } : {},
    );
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (d: string) => (text += d));
      res.on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
        } catch (e) {
          reject(e);
        }
      });
    });
    req.end(payload);
  });
}

/** An open NDJSON stream. */
export interface LineStream {
  close(): void;
}

/**
 * Opens a GET whose reply is newline-delimited JSON; calls `onLine` with every non-blank line (unparsed, so that
 * the caller can time its parsing).
 * Resolves once the response headers arrived with status 200.
 */
export function openNdjson(
  config: ClientConfig,
  agent: http.Agent,
  path: string,
  onLine: (line: string) => void,
): Promise<LineStream> {
  return new Promise((resolve, reject) => {
    const req = send(config, agent, 'GET', path, {});
    req.on('error', reject);
    req.on('response', (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`watch ${path}: HTTP ${res.statusCode}`));
        return;
      }
      let buf = '';
      res.setEncoding('utf8').on('data', (d: string) => {
        buf += d;
        let nl: number;
        while ((nl = buf.indexOf('\n')) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          if (line.trim()) onLine(line);
        }
      });
      res.on('error', () => {});
      resolve({ close: () => req.destroy() });
    });
    req.end();
  });
}
