/**
 * GET of one object and of a list (as JSON or as a Table for kubectl).
 */
import { ApiError } from '../../meta/api-error.ts';
import type { KubeObject, ObjectList } from '../../meta/types.ts';
import { API_VERSION } from '../../meta/types.ts';
import type { ResourceRequest } from './context.ts';
import { selectorParams } from './context.ts';
import { sendJson } from '../http/respond.ts';
import type { Representation } from './table.ts';
import { tableContentType, toTable } from './table.ts';
import { limitParam, type Page } from './list-pages.ts';

/** Reads an object from the store or fails with 404. */
export function getOrNotFound(r: ResourceRequest, name: string): KubeObject {
  const obj = r.store.get(r.info.plural, name);
  if (!obj) throw ApiError.notFound(r.info.plural, name);
  return obj;
}

/** GET `/<plural>/<name>` (and `/status`). */
export function handleGet(r: ResourceRequest, rep: Representation): void {
  const obj = getOrNotFound(r, r.name!);
  if (rep.as === 'table') {
    const table = toTable(r.info, [obj], rep, obj.metadata.resourceVersion ?? '');
    sendJson(r.res, 200, table, { 'Content-Type': tableContentType(rep) });
    return;
  }
  sendJson(r.res, 200, obj);
}

/**
 * GET `/<plural>` without `watch`: the matching objects with the store's resourceVersion, paged by `limit` and
 * `continue` (list-pages.ts) for JSON and Tables alike. As JSON, concurrent requests for the same page share one
 * serialization (shared-lists.ts).
 */
export function handleList(r: ResourceRequest, rep: Representation): void {
  const sel = selectorParams(r.query);
  const limit = limitParam(r.query);
  const token = r.query.get('continue') || undefined;
  if (token !== undefined && r.query.get('resourceVersion'))
    throw ApiError.badRequest('specifying resource version is not allowed when using continue');
  const storeRv = r.store.resourceVersion();
  const id = [r.client, r.info.plural, sel.labelSelector, sel.fieldSelector];
  const page = (): Page =>
    r.pages.page(id, { storeRv, ...(limit !== undefined ? { limit } : {}), ...(token ? { token } : {}) }, () =>
      r.store.list(r.info.plural, sel),
    );
  if (rep.as === 'table') {
    const p = page();
    const table = toTable(r.info, p.items, rep, listMeta(p));
    sendJson(r.res, 200, table, { 'Content-Type': tableContentType(rep) });
    return;
  }
  const key = JSON.stringify([...id, storeRv, limit, token]);
  r.lists.send(r.res, key, (): ObjectList => {
    const p = page();
    return { apiVersion: API_VERSION, kind: `${r.info.kind}List`, metadata: listMeta(p), items: p.items };
  });
}

/** A page's ListMeta: resourceVersion, and `continue` with `remainingItemCount` when more remain. */
function listMeta(p: Page): ObjectList['metadata'] {
  return {
    resourceVersion: p.resourceVersion,
    ...(p.continue !== undefined ? { continue: p.continue, remainingItemCount: p.remainingItemCount } : {}),
  };
}
