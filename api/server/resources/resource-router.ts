/**
 * Routes a request for `/apis/meshctl.dev/v1alpha1/<plural>[/<name>[/status]]` to its handler: resolves the
 * kind (404), checks the method (405), authorizes the verb (403), then lists, watches, reads or writes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { kindByPlural } from '../../v1alpha1/kinds.ts';
import type { AppConfig } from '../app.ts';
import type { Identity, Verb } from '../access/auth.ts';
import type { ResourceRequest } from './context.ts';
import { boolParam } from './context.ts';
import { clientKey } from '../access/auth.ts';
import { handleGet, handleList } from './read-handlers.ts';
import type { Route } from '../http/routes.ts';
import { notFoundPath } from '../http/routes.ts';
import { requireMethod } from '../http/respond.ts';
import { negotiate } from './table.ts';
import { serveWatch } from './watch.ts';
import { handleCreate, handleDelete, handlePatch, handleUpdate } from './write-handlers.ts';

/** A request the dispatcher has authenticated and found to address a resource. */
export interface ResourceCall {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  method: string;
  identity: Identity;
  route: Extract<Route, { type: 'resource' }>;
}

/** Serves a resource request; the promise (for writes) rejects with what should be sent as a Status. */
export function serveResource(cfg: AppConfig, c: ResourceCall): Promise<void> | undefined {
  const { route, url } = c;
  const info = kindByPlural(route.plural);
  if (!info) throw notFoundPath();
  if (route.subresource !== undefined && (route.subresource !== 'status' || !info.hasStatus)) throw notFoundPath();
  requireMethod(c.res, c.method, allowedMethods(route));
  const watch = route.watchPath || (route.name === undefined && boolParam(url.searchParams, 'watch'));
  const verb = verbOf(c.method, route.name !== undefined, watch);
  const refused = cfg.authorize(c.identity, {
    verb,
    plural: info.plural,
    path: url.pathname,
    ...(route.name !== undefined ? { name: route.name } : {}),
    ...(route.subresource !== undefined ? { subresource: route.subresource } : {}),
  });
  if (refused) throw refused;
  const r: ResourceRequest = {
    req: c.req,
    res: c.res,
    query: url.searchParams,
    info,
    store: cfg.store,
    logger: cfg.logger,
    maxBodyBytes: cfg.maxBodyBytes,
    lists: cfg.lists,
    pages: cfg.pages,
    client: clientKey(c.identity),
    ...(route.name !== undefined ? { name: route.name } : {}),
    ...(route.subresource === 'status' ? { subresource: 'status' as const } : {}),
  };
  switch (verb) {
    case 'watch':
      serveWatch(r, negotiate(c.req, url.searchParams), { registry: cfg.watches, heartbeatMs: cfg.heartbeatMs });
      return undefined;
    case 'list':
      handleList(r, negotiate(c.req, url.searchParams));
      return undefined;
    case 'get':
      handleGet(r, negotiate(c.req, url.searchParams));
      return undefined;
    case 'create':
      return handleCreate(r);
    case 'update':
      return handleUpdate(r);
    case 'patch':
      return handlePatch(r);
    case 'delete':
      return handleDelete(r);
  }
}

function allowedMethods(route: ResourceCall['route']): string[] {
  if (route.watchPath) return ['GET'];
  if (route.subresource) return ['GET', 'PUT', 'PATCH'];
  if (route.name !== undefined) return ['GET', 'PUT', 'PATCH', 'DELETE'];
  return ['GET', 'POST'];
}

function verbOf(method: string, named: boolean, watch: boolean): Verb {
  if (watch) return 'watch';
  switch (method) {
    case 'POST':
      return 'create';
    case 'PUT':
      return 'update';
    case 'PATCH':
      return 'patch';
    case 'DELETE':
      return 'delete';
    default:
      return named ? 'get' : 'list';
  }
}
