/**
 * `/apis/meshctl.dev/v1alpha1/nodes/<node>/logs`: service logs, kept in files (log-files.ts), never in
 * the store.
 *
 * - `POST` (verb `create` on `nodes/<node>/logs`: the admin, or node `<node>` itself): a JSON
 *   `LogPost` (api/wire/log-wire.ts) → 200 `{accepted, duplicates}`.
 * - `GET` (verb `get`: the admin): without `service`, a `ServiceLogList`; with `service=<id>`, the log
 *   as `text/plain` — all of it or the last `tailLines=N` lines, without the stored time stamps unless
 *   `timestamps=true`; with `follow=true`, then every new line as it arrives (chunked) until the client
 *   goes away or the server stops.
 *
 * An unknown node, or a service without logs, is a 404 `Status`; a bad parameter a 400.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../meta/api-error.ts';
import type { AppConfig } from '../app.ts';
import type { Identity } from '../access/auth.ts';
import { bodyFormat, parseBody, readBody } from '../http/body.ts';
import type { LogFiles } from './log-files.ts';
import { parseLogPost, serviceLogList, serviceProblem } from '../../wire/log-wire.ts';
import { requireMethod, sendJson } from '../http/respond.ts';

/** A follower that stops reading is cut off once this much is buffered for it. */
const MAX_BUFFERED_BYTES = 16 * 1024 * 1024;

/** A request the dispatcher has authenticated and found to address a node's logs. */
export interface LogsCall {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  method: string;
  identity: Identity;
  node: string;
}

/** The parameters of a GET. */
interface LogQuery {
  service?: string;
  tailLines?: number;
  follow: boolean;
  timestamps: boolean;
}

/** Serves a logs request; the promise rejects with what should be sent as a Status. */
export function serveLogs(cfg: AppConfig, c: LogsCall): Promise<void> | undefined {
  requireMethod(c.res, c.method, ['GET', 'POST']);
  const verb = c.method === 'POST' ? 'create' : 'get';
  const refused = cfg.authorize(c.identity, {
    verb,
    plural: 'nodes',
    name: c.node,
    subresource: 'logs',
    path: c.url.pathname,
  });
  if (refused) throw refused;
  const logs = cfg.logs;
  if (!logs)
    throw new ApiError({
      reason: 'NotFound',
      message: 'this server keeps no service logs (it was started without a logs directory)',
    });
  if (!cfg.store.get('nodes', c.node)) throw ApiError.notFound('nodes', c.node);
  if (c.method === 'POST') return receive(cfg, logs, c);
  const q = logQuery(c.url.searchParams);
  return q.service === undefined ? listServices(logs, c) : serveService(cfg, logs, c, { ...q, service: q.service });
}

async function receive(cfg: AppConfig, logs: LogFiles, c: LogsCall): Promise<void> {
  const format = bodyFormat(c.req.headers['content-type'], ['json']);
  if (format !== 'json') {
    throw new ApiError({
      reason: 'UnsupportedMediaType',
      message: `the body type "${c.req.headers['content-type'] ?? ''}" is not supported; supported: application/json`,
    });
  }
  const post = parseLogPost(parseBody(await readBody(c.req, cfg.maxBodyBytes), 'json'));
  const result = await logs.append(c.node, post);
  sendJson(c.res, 200, result);
}

async function listServices(logs: LogFiles, c: LogsCall): Promise<void> {
  sendJson(c.res, 200, serviceLogList(c.node, await logs.list(c.node)));
}

async function serveService(
  cfg: AppConfig,
  logs: LogFiles,
  c: LogsCall,
  q: LogQuery & { service: string },
): Promise<void> {
  if (!(await logs.has(c.node, q.service))) {
    throw new ApiError({
      reason: 'NotFound',
      message: `service "${q.service}" on node "${c.node}" has no logs`,
      details: { name: q.service, kind: 'logs' },
    });
  }
  const shown = (text: string): string => (q.timestamps ? text : text.replace(/^\S* /gm, ''));
  if (!q.follow) {
    const text = shown(await logs.read(c.node, q.service, q.tailLines));
    c.res
      .writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) })
      .end(text);
    return;
  }
  const { res } = c;
  res.writeHead(200, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Transfer-Encoding': 'chunked',
    'Cache-Control': 'no-cache, private',
  });
  res.flushHeaders();
  let stop: (() => void) | undefined;
  let ended = false;
  const end = (): void => {
    if (ended) return;
    ended = true;
    stop?.();
    cfg.watches.delete(end);
    if (!res.writableEnded && !res.destroyed) res.end();
  };
  cfg.watches.add(end);
  res.once('close', end);
  stop = await logs.follow(c.node, q.service, q.tailLines, (text) => {
    if (ended || res.destroyed || text === '') return;
    res.write(shown(text));
    if (res.writableLength > MAX_BUFFERED_BYTES) {
      cfg.logger.error('Cut off a log follower that stopped reading', {
        node: c.node,
        service: q.service,
        bufferedBytes: res.writableLength,
      });
      end();
      res.destroy();
    }
  });
  if (ended) stop();
}

/** Reads and checks the GET parameters (400 on a bad one). */
function logQuery(p: URLSearchParams): LogQuery {
  const service = p.get('service') ?? undefined;
  if (service !== undefined) {
    const why = serviceProblem(service);
    if (why) throw ApiError.badRequest(`service: ${why}`);
  }
  const tail = p.get('tailLines');
  if (tail !== null && !/^\d{1,9}$/.test(tail))
    throw ApiError.badRequest(`tailLines must be a non-negative integer, not "${tail.slice(0, 50)}"`);
  return {
    ...(service !== undefined ? { service } : {}),
    ...(tail !== null ? { tailLines: Number(tail) } : {}),
    follow: flag(p, 'follow'),
    timestamps: flag(p, 'timestamps'),
  };
}

function flag(p: URLSearchParams, name: string): boolean {
  const v = p.get(name);
  if (v === null || v === '' || v === 'false' || v === '0') return false;
  if (v === 'true' || v === '1') return true;
  throw ApiError.badRequest(`${name} must be true or false, not "${v.slice(0, 50)}"`);
}
