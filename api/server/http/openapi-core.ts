/**
 * The OpenAPI v3 document of core/v1 (`/openapi/v3/api/v1`), which has one resource here: the read-only view
 * of our Events (resources/core-events.ts), so that `kubectl explain events` works. Its Event schema is ours
 * with `apiVersion: v1` and the two fields the view adds.
 */
import { componentSchemas, schemaName } from './openapi-schema.ts';

type Json = Record<string, unknown>;

/** The path of core/v1 in the v3 root, and its document's URL path. */
export const V3_CORE_PATH = 'api/v1';
export const V3_CORE_URL = `/openapi/v3/${V3_CORE_PATH}`;

const CORE_EVENT = 'io.k8s.api.core.v1.Event';
const GVK = { group: '', version: 'v1', kind: 'Event' };

function get(id: string, action: string, returns: Json): Json {
  return {
    operationId: id,
    description: `${action} Event (read-only view of events.meshctl.dev)`,
    responses: { '200': { description: 'OK', content: { 'application/json': { schema: returns } } } },
    'x-kubernetes-action': action,
    'x-kubernetes-group-version-kind': GVK,
  };
}

/** The core/v1 document: the Event schema and the list and get paths of the view. */
export function coreV3Document(title: string): Json {
  const schemas = componentSchemas('v3');
  const ours = schemas[schemaName('Event')] as Json;
  const text = (description: string): Json => ({ type: 'string', description });
  schemas[CORE_EVENT] = {
    ...ours,
    description: 'An event of events.meshctl.dev as core/v1 shows it, in namespace default (read-only).',
    properties: {
      ...(ours.properties as Json),
      apiVersion: { type: 'string', enum: ['v1'] },
      reportingComponent: text('The reporting component (source.component).'),
      reportingInstance: text('The node it was reported from (source.host).'),
    },
    'x-kubernetes-group-version-kind': [GVK],
  };
  const one = { $ref: `#/components/schemas/${CORE_EVENT}` };
  const list = { type: 'object', properties: { items: { type: 'array', items: one } } };
  return {
    openapi: '3.0.0',
    info: { title, version: 'v1' },
    paths: {
      '/api/v1/events': { get: get('listCoreV1EventForAllNamespaces', 'list', list) },
      '/api/v1/namespaces/{namespace}/events': { get: get('listCoreV1NamespacedEvent', 'list', list) },
      '/api/v1/namespaces/{namespace}/events/{name}': { get: get('readCoreV1NamespacedEvent', 'get', one) },
    },
    components: { schemas },
  };
}
