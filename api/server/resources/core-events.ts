/**
 * A read-only core/v1 view of our Events, for `kubectl describe`: it lists `/api/v1/events` (or
 * `/api/v1/namespaces/<ns>/events`) with a field selector on `involvedObject.*` and prints what it finds under
 * "Events:". The objects are our `meshctl.dev/v1alpha1` Events shaped as core/v1 Events, in namespace
 * `default` (where kube-apiserver keeps the events of cluster-scoped objects). Only `events` is served under
 * `/api/v1`, so kubectl still maps `nodes` and everything else to meshctl.dev (http/discovery.ts).
 *
 * Served: list and get, as JSON or a Table. Not served: writes, and watch (405; watch
 * `events.meshctl.dev` instead). A field selector on `involvedObject.uid` also matches an event that names
 * its object without a uid (our agents report by name).
 */
import { ApiError } from '../../meta/api-error.ts';
import type { KubeObject } from '../../meta/types.ts';
import { matchesFields, parseFieldSelector, type FieldRequirement } from '../../meta/selectors.ts';
import { kindByPlural } from '../../v1alpha1/kinds.ts';
import type { Store } from '../../store/types.ts';
import { requireMethod, sendJson } from '../http/respond.ts';
import type { Route } from '../http/routes.ts';
import { negotiate, tableContentType, toTable } from './table.ts';
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The namespace the core view puts every event in. */
export const EVENTS_NAMESPACE = 'default';

/** One of our Events as a core/v1 Event. */
export function toCoreEvent(e: KubeObject): KubeObject {
  const source = (e.source ?? {}) as { component?: string; host?: string };
  return {
    ...e,
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { ...e.metadata, namespace: EVENTS_NAMESPACE },
    reportingComponent: source.component ?? '',
    reportingInstance: source.host ?? '',
  };
}

/** A request for the core events view, after authentication and authorization. */
export interface CoreEventsCall {
  req: IncomingMessage;
  res: ServerResponse;
  url: URL;
  method: string;
  store: Store;
  route: Extract<Route, { type: 'core-events' }>;
}

/** Serves GET of the list or of one event. */
export function serveCoreEvents(c: CoreEventsCall): void {
  requireMethod(c.res, c.method, ['GET']);
  const q = c.url.searchParams;
  if (c.route.watchPath || ['1', 'true'].includes(q.get('watch') ?? '')) {
    throw new ApiError({
      reason: 'MethodNotAllowed',
      message: 'watch is not served on the core/v1 view of events; watch events.meshctl.dev instead',
    });
  }
  const info = kindByPlural('events')!;
  const rep = negotiate(c.req, q);
  const inNamespace = c.route.namespace === undefined || c.route.namespace === EVENTS_NAMESPACE;
  if (c.route.name !== undefined) {
    const found = inNamespace ? c.store.get('events', c.route.name) : undefined;
    if (!found) throw ApiError.notFound('events', c.route.name);
    const obj = toCoreEvent(found);
    if (rep.as === 'table')
      sendJson(c.res, 200, toTable(info, [obj], rep, ''), { 'Content-Type': tableContentType(rep) });
    else sendJson(c.res, 200, obj);
    return;
  }
  const fields = parseFieldSelector(q.get('fieldSelector') ?? '');
  const labelSelector = q.get('labelSelector') || undefined;
  const { items, resourceVersion } = c.store.list('events', labelSelector ? { labelSelector } : {});
  const matching = inNamespace ? items.map(toCoreEvent).filter((e) => matchesFields(e, lenient(e, fields))) : [];
  if (rep.as === 'table') {
    sendJson(c.res, 200, toTable(info, matching, rep, resourceVersion), { 'Content-Type': tableContentType(rep) });
    return;
  }
  sendJson(c.res, 200, { apiVersion: 'v1', kind: 'EventList', metadata: { resourceVersion }, items: matching });
}

/** The selector without its `involvedObject.uid` term when the event names no uid. */
function lenient(e: KubeObject, fields: readonly FieldRequirement[]): readonly FieldRequirement[] {
  const uid = (e.involvedObject as { uid?: string } | undefined)?.uid;
  if (uid) return fields;
  return fields.filter((f) => f.path.join('.') !== 'involvedObject.uid');
}
