/**
 * What a resource handler gets: the request, where it points, and the server's parts; plus the small
 * query-parameter readers every handler shares (`dryRun`, selectors, `propagationPolicy`).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError } from '../../meta/api-error.ts';
import type { Store } from '../../store/types.ts';
import type { KindInfo } from '../../v1alpha1/kind-info.ts';
import type { Logger } from '../../meta/logger.ts';
import type { SharedLists } from './shared-lists.ts';
import type { ListPages } from './list-pages.ts';

/** A request for a resource, after routing, authentication and authorization. */
export interface ResourceRequest {
  req: IncomingMessage;
  res: ServerResponse;
  query: URLSearchParams;
  info: KindInfo;
  name?: string;
  subresource?: 'status';
  store: Store;
  logger: Logger;
  maxBodyBytes: number;
  /** Lists being sent, shared among concurrent requests for the same one. */
  lists: SharedLists;
  /** Snapshots of lists being paged (`limit`/`continue`). */
  pages: ListPages;
  /** Who asks (`admin`, `node/<name>`): part of a shared list's key, as a node's view differs. */
  client: string;
}

/** `?dryRun=All` (repeatable); any other value is a 400, as in kube-apiserver. */
export function dryRunParam(query: URLSearchParams, fromBody: unknown = undefined): boolean {
  const values = [...query.getAll('dryRun'), ...(Array.isArray(fromBody) ? fromBody : [])];
  for (const v of values) if (v !== 'All') throw ApiError.badRequest(`dryRun must be "All", not ${JSON.stringify(v)}`);
  return values.length > 0;
}

/** `labelSelector` and `fieldSelector`, when present. */
export function selectorParams(query: URLSearchParams): { labelSelector?: string; fieldSelector?: string } {
  const labelSelector = query.get('labelSelector') || undefined;
  const fieldSelector = query.get('fieldSelector') || undefined;
  return { ...(labelSelector ? { labelSelector } : {}), ...(fieldSelector ? { fieldSelector } : {}) };
}

/** A propagation policy from the query or a DeleteOptions body. */
export function propagationPolicy(v: unknown): 'Orphan' | 'Background' | 'Foreground' | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (v === 'Orphan' || v === 'Background' || v === 'Foreground') return v;
  throw ApiError.badRequest(`propagationPolicy must be Orphan, Background or Foreground, not ${JSON.stringify(v)}`);
}

/** True for `true`/`1` (watch, allowWatchBookmarks). */
export function boolParam(query: URLSearchParams, name: string): boolean {
  const v = query.get(name);
  return v === 'true' || v === '1';
}
