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

/** GET `/<plural>` without `watch`: the matching objects with the store's resourceVersion. */
export function handleList(r: ResourceRequest, rep: Representation): void {
  const { items, resourceVersion } = r.store.list(r.info.plural, selectorParams(r.query));
  if (rep.as === 'table') {
    sendJson(r.res, 200, toTable(r.info, items, rep, resourceVersion), { 'Content-Type': tableContentType(rep) });
    return;
  }
  const list: ObjectList = {
    apiVersion: API_VERSION,
    kind: `${r.info.kind}List`,
    metadata: { resourceVersion },
    items,
  };
  sendJson(r.res, 200, list);
}
