/**
 * A read-only core/v1 view of our Events, for `kubectl describe`: it lists `/api/v1/events` (or
 * `/api/v1/namespaces/<ns>/events`) with a field selector on `involvedObject.*` and prints what it finds under
 * "Events:". The objects are our `meshctl.dev/v1alpha1` Events shaped as core/v1 Events, in namespace
 * `default` (where kube-apiserver keeps the events of cluster-scoped objects). Only `events` is served under
 * `/api/v1`, so kubectl still maps `nodes` and everything else to meshctl.dev (http/discovery.ts).
 *
 * Served: list, get and watch (`kubectl get events -w`), as JSON or a Table. Not served: writes (405). A field
 * selector on `involvedObject.uid` also matches an event that names its object without a uid (our agents
 * report by name).
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
import type { KindInfo } from '../../v1alpha1/kind-info.ts';
import type { ResourceRequest } from './context.ts';
import type { Representation } from './table.ts';
import type { ServeWatchOptions } from './watch.ts';

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
  /** Serves a watch of our events with this view of them (resources/watch.ts). */
  watch: (r: ResourceRequest, rep: Representation, view: NonNullable<ServeWatchOptions['view']>) => void;
  /** The rest of a ResourceRequest for a watch. */
  request: Omit<ResourceRequest, 'req' | 'res' | 'query' | 'info' | 'store'>;
}

/** Serves GET of the list or of one event, and watches. */
export function serveCoreEvents(c: CoreEventsCall): void {
  requireMethod(c.res, c.method, ['GET']);
  const q = c.url.searchParams;
  const info = kindByPlural('events')!;
  if (c.route.watchPath || ['1', 'true'].includes(q.get('watch') ?? '')) {
    watchCoreEvents(c, info);
    return;
  }
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

/** A watch of the view: the store watch without the field selector, which the view applies to core Events. */
function watchCoreEvents(c: CoreEventsCall, info: KindInfo): void {
  const fields = parseFieldSelector(c.url.searchParams.get('fieldSelector') ?? '');
  const query = new URLSearchParams(c.url.searchParams);
  query.delete('fieldSelector');
  if (c.route.name !== undefined) query.set('fieldSelector', `metadata.name=${c.route.name}`);
  const inNamespace = c.route.namespace === undefined || c.route.namespace === EVENTS_NAMESPACE;
  const map = (obj: KubeObject): KubeObject | undefined => {
    const e = toCoreEvent(obj);
    return inNamespace && matchesFields(e, lenient(e, fields)) ? e : undefined;
  };
  const r: ResourceRequest = { ...c.request, req: c.req, res: c.res, query, info, store: c.store };
  c.watch(r, negotiate(c.req, query), { apiVersion: 'v1', map });
}

/** The selector without its `involvedObject.uid` term when the event names no uid. */
function lenient(e: KubeObject, fields: readonly FieldRequirement[]): readonly FieldRequirement[] {
  const uid = (e.involvedObject as { uid?: string } | undefined)?.uid;
  if (uid) return fields;
  return fields.filter((f) => f.path.join('.') !== 'involvedObject.uid');
}
