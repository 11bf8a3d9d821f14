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
 * GET `/<plural>` without `watch`: the matching objects with the store's resourceVersion. As JSON, concurrent
 * requests for the same list share one serialization (shared-lists.ts).
 */
export function handleList(r: ResourceRequest, rep: Representation): void {
  const sel = selectorParams(r.query);
  if (rep.as === 'table') {
    const { items, resourceVersion } = r.store.list(r.info.plural, sel);
    sendJson(r.res, 200, toTable(r.info, items, rep, resourceVersion), { 'Content-Type': tableContentType(rep) });
    return;
  }
  const key = JSON.stringify([
    r.client,
    r.info.plural,
    sel.labelSelector,
    sel.fieldSelector,
    r.store.resourceVersion(),
  ]);
  r.lists.send(r.res, key, (): ObjectList => {
    const { items, resourceVersion } = r.store.list(r.info.plural, sel);
    return { apiVersion: API_VERSION, kind: `${r.info.kind}List`, metadata: { resourceVersion }, items };
  });
}
