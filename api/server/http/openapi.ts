/**
 * The OpenAPI documents kubectl reads: `/openapi/v3` (the root: one path per group-version, with a hash),
 * `/openapi/v3/apis/meshctl.dev/v1alpha1` (its document), `/openapi/v3/api/v1` (the core/v1 events view,
 * openapi-core.ts) and `/openapi/v2` (one Swagger document, JSON only). Built once from our JSON Schemas
 * (openapi-schema.ts). kubectl reads v3; client-side `kubectl apply` also asks for v2 in protobuf when v3 names
 * no strategic merge patch for a kind, and on the 406 it sends a JSON merge patch, as for a CRD.
 *
 * What kubectl looks for: a schema per kind carrying `x-kubernetes-group-version-kind` (`explain`), and a
 * PATCH operation per kind with that extension and a `fieldValidation` query parameter — finding it, kubectl
 * leaves validation to the server (`fieldValidation=Strict|Warn|Ignore`) instead of validating on its side.
 */
import { createHash } from 'node:crypto';
import { API_VERSION } from '../../meta/types.ts';
import { ApiError } from '../../meta/api-error.ts';
import type { KindInfo } from '../../v1alpha1/kind-info.ts';
import { KINDS } from '../../v1alpha1/kinds.ts';
import { componentSchemas, gvk, kindRef, type OpenApiVersion } from './openapi-schema.ts';
import { coreV3Document, V3_CORE_PATH, V3_CORE_URL } from './openapi-core.ts';
import { versionInfo } from './version.ts';

type Json = Record<string, unknown>;

/** The path of our group-version in the v3 root, and its document's URL path. */
export const V3_GROUP_PATH = `apis/${API_VERSION}`;
export const V3_GROUP_URL = `/openapi/v3/${V3_GROUP_PATH}`;

/** No strategic merge patch, as for a CRD: finding none, `kubectl apply` sends a JSON merge patch. */
const PATCH_TYPES = ['application/apply-patch+yaml', 'application/json-patch+json', 'application/merge-patch+json'];
const WRITE_PARAMS: Record<string, string> = {
  dryRun: 'When present (All), the write is checked but not stored.',
  fieldManager: 'The name of the actor making the change (required for server-side apply).',
  fieldValidation:
    'What to do with unknown fields: Strict (refuse), Warn (drop, with a Warning header) or Ignore (drop).',
};
const READ_PARAMS = ['labelSelector', 'fieldSelector', 'resourceVersion', 'watch', 'limit', 'continue'];

interface Op {
  action: string;
  kind: string;
  /** The response's schema name (the kind, or `<Kind>List`). */
  returns: string;
  body?: 'object' | 'patch' | 'delete';
  query: string[];
}

function param(name: string, version: OpenApiVersion, description = ''): Json {
  const type = name === 'force' || name === 'watch' ? 'boolean' : name === 'limit' ? 'integer' : 'string';
  return version === 'v3'
    ? { name, in: 'query', description, schema: { type, uniqueItems: true } }
    : { name, in: 'query', description, type, uniqueItems: true };
}

function operation(op: Op, id: string, version: OpenApiVersion): Json {
  const returns = kindRef(op.returns, version);
  const types = op.body === 'patch' ? PATCH_TYPES : ['application/json', 'application/yaml'];
  const bodySchema = op.body === 'patch' || op.body === 'delete' ? { type: 'object' } : kindRef(op.kind, version);
  const params = op.query.map((q) => param(q, version, WRITE_PARAMS[q]));
  const out: Json = { operationId: id, tags: [API_VERSION], description: `${op.action} ${op.kind}` };
  if (version === 'v3') {
    out.parameters = params;
    if (op.body) out.requestBody = { required: op.body !== 'delete', content: by(types, { schema: bodySchema }) };
    out.responses = { '200': { description: 'OK', content: { 'application/json': { schema: returns } } } };
  } else {
    out.consumes = types;
    out.produces = ['application/json', 'application/yaml'];
    out.parameters = [
      ...(op.body ? [{ name: 'body', in: 'body', required: true, schema: bodySchema }] : []),
      ...params,
    ];
    out.responses = { '200': { description: 'OK', schema: returns } };
  }
  return { ...out, 'x-kubernetes-action': op.action, 'x-kubernetes-group-version-kind': gvk(op.kind) };
}

function by(keys: string[], value: unknown): Json {
  return Object.fromEntries(keys.map((k) => [k, value]));
}

const WRITE = ['dryRun', 'fieldManager', 'fieldValidation'];

/** The paths of one kind: its collection, its objects and, when it has one, the status subresource. */
function kindPaths(info: KindInfo, version: OpenApiVersion): Json {
  const { kind, plural } = info;
  const name = kind;
  const one = (action: string, extra: Partial<Op> = {}): Op => ({ action, kind, returns: kind, query: [], ...extra });
  const type = version === 'v3' ? { schema: { type: 'string' } } : { type: 'string' };
  const named = { parameters: [{ name: 'name', in: 'path', required: true, ...type }] };
  const base = `/apis/${API_VERSION}/${plural}`;
  const paths: Json = {
    [base]: {
      get: operation(one('list', { returns: `${kind}List`, query: READ_PARAMS }), `list${name}`, version),
      post: operation(one('post', { body: 'object', query: WRITE }), `create${name}`, version),
    },
    [`${base}/{name}`]: {
      ...named,
      get: operation(one('get'), `read${name}`, version),
      put: operation(one('put', { body: 'object', query: WRITE }), `replace${name}`, version),
      patch: operation(one('patch', { body: 'patch', query: [...WRITE, 'force'] }), `patch${name}`, version),
      delete: operation(one('delete', { body: 'delete', query: ['dryRun'] }), `delete${name}`, version),
    },
  };
  if (info.hasStatus) {
    paths[`${base}/{name}/status`] = {
      ...named,
      get: operation(one('get'), `read${name}Status`, version),
      put: operation(one('put', { body: 'object', query: WRITE }), `replace${name}Status`, version),
      patch: operation(one('patch', { body: 'patch', query: [...WRITE, 'force'] }), `patch${name}Status`, version),
    };
  }
  return paths;
}

function buildV3(kinds: readonly KindInfo[]): Json {
  return {
    openapi: '3.0.0',
    info: { title: 'meshctl', version: versionInfo().gitVersion },
    paths: Object.assign({}, ...kinds.map((k) => kindPaths(k, 'v3'))) as Json,
    components: { schemas: componentSchemas('v3') },
  };
}

function buildV2(kinds: readonly KindInfo[]): Json {
  return {
    swagger: '2.0',
    info: { title: 'meshctl', version: versionInfo().gitVersion },
    paths: Object.assign({}, ...kinds.map((k) => kindPaths(k, 'v2'))) as Json,
    definitions: componentSchemas('v2'),
  };
}

/** A document serialized once, with its hash (the v3 root names it; clients cache by it). */
interface Built {
  text: string;
  hash: string;
}

type Docs = Record<OpenApiDoc, Built> & { root: Built };

let cache: Docs | undefined;

function built(doc: unknown): Built {
  const text = JSON.stringify(doc);
  return { text, hash: createHash('sha512').update(text).digest('hex').toUpperCase() };
}

function documents(): Docs {
  if (cache) return cache;
  const group = built(buildV3(KINDS));
  const core = built(coreV3Document(`meshctl ${versionInfo().gitVersion}`));
  const root = built({
    paths: {
      [V3_GROUP_PATH]: { serverRelativeURL: `${V3_GROUP_URL}?hash=${group.hash}` },
      [V3_CORE_PATH]: { serverRelativeURL: `${V3_CORE_URL}?hash=${core.hash}` },
    },
  });
  cache = { v2: built(buildV2(KINDS)), v3: root, 'v3-group': group, 'v3-core': core, root };
  return cache;
}

/** Which OpenAPI document a path names: v2, the v3 root, or the v3 document of meshctl.dev/v1alpha1 or core/v1. */
export type OpenApiDoc = 'v2' | 'v3' | 'v3-group' | 'v3-core';

/**
 * The serialized document and its ETag. `/openapi/v2` is JSON only: a client asking only for the protobuf
 * encoding gets 406 NotAcceptable.
 */
export function openApiDocument(doc: OpenApiDoc, accept: string | undefined): { text: string; etag: string } {
  const docs = documents();
  if (doc === 'v2' && accept && !/application\/json|\*\/\*/.test(accept)) {
    throw new ApiError({
      reason: 'NotAcceptable',
      message: `/openapi/v2 is served as application/json only, not ${JSON.stringify(accept.slice(0, 200))}`,
    });
  }
  const b = docs[doc];
  return { text: b.text, etag: `"${b.hash.slice(0, 32)}"` };
}
