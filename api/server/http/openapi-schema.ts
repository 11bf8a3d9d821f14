/**
 * Turns our JSON Schemas (api/v1alpha1/schemas, draft-07) into OpenAPI schemas as kube-apiserver publishes a
 * CRD's: one named component per kind and per shared definition (`dev.meshctl.v1alpha1.Node`,
 * `dev.meshctl.v1alpha1.ObjectMeta`), `$ref` with a description wrapped in `allOf` (OpenAPI ignores a
 * `$ref`'s siblings), `const` as a one-value `enum`, and the keywords OpenAPI does not have (or kube-openapi
 * parses differently, such as draft `discriminator`) left out. Version 2 also drops `oneOf` and `not`, as
 * kube-apiserver does for CRDs in `/openapi/v2`.
 */
import { API_VERSION, GROUP, VERSION } from '../../meta/types.ts';
import { KINDS } from '../../v1alpha1/kinds.ts';
import { schemaFor } from '../../v1alpha1/schemas.ts';
import metaSchema from '../../v1alpha1/schemas/meta.schema.json' with { type: 'json' };
import hostResourceSchema from '../../v1alpha1/schemas/host-resource.schema.json' with { type: 'json' };

/** Which OpenAPI version a schema is converted for. */
export type OpenApiVersion = 'v2' | 'v3';

type Json = Record<string, unknown>;

/** The component name prefix of our group-version, reversed as kube names them. */
export const SCHEMA_PREFIX = `${GROUP.split('.').reverse().join('.')}.${VERSION}`;

/** Keywords never published: ours (`tsType`, `x-message`), draft-only ones, and draft `discriminator`. */
const DROPPED = new Set(['$schema', '$id', 'tsType', 'x-message', 'definitions', 'discriminator', 'propertyNames']);
/** Keywords OpenAPI v2 (Swagger) has no place for. */
const DROPPED_V2 = new Set(['oneOf', 'anyOf', 'not']);

/** The component name of a kind's or shared definition's schema, e.g. `dev.meshctl.v1alpha1.Node`. */
export function schemaName(name: string): string {
  return `${SCHEMA_PREFIX}.${name}`;
}

function refTo(name: string, version: OpenApiVersion): string {
  return `${version === 'v3' ? '#/components/schemas/' : '#/definitions/'}${schemaName(name)}`;
}

/** Converts one schema node (recursively). */
function convert(node: unknown, version: OpenApiVersion): unknown {
  if (Array.isArray(node)) return node.map((n) => convert(n, version));
  if (node === null || typeof node !== 'object') return node;
  const src = node as Json;
  const out: Json = {};
  for (const [k, v] of Object.entries(src)) {
    if (DROPPED.has(k) || (version === 'v2' && DROPPED_V2.has(k))) continue;
    if (k === '$ref') continue;
    if (k === 'const') out.enum = [v];
    else if (k === 'properties') out.properties = convertMap(v as Json, version);
    else out[k] = convert(v, version);
  }
  if (src.const !== undefined && out.type === undefined && typeof src.const === 'string') out.type = 'string';
  if (typeof src.$ref !== 'string') return out;
  const ref = { $ref: refTo(src.$ref.split('/').pop()!, version) };
  return Object.keys(out).length === 0 ? ref : { allOf: [ref], ...out };
}

function convertMap(map: Json, version: OpenApiVersion): Json {
  const out: Json = {};
  for (const [k, v] of Object.entries(map)) out[k] = convert(v, version);
  return out;
}

/** The group-version-kind extension value of a kind, as kube writes it on schemas and operations. */
export function gvk(kind: string): { group: string; version: string; kind: string } {
  return { group: GROUP, version: VERSION, kind };
}

/** Every named schema of our group-version: the kinds (with their GVK) and the shared definitions. */
export function componentSchemas(version: OpenApiVersion): Json {
  const out: Json = {};
  for (const file of [metaSchema, hostResourceSchema]) {
    for (const [name, def] of Object.entries(file.definitions)) out[schemaName(name)] = convert(def, version);
  }
  for (const info of KINDS) {
    const schema = convert(schemaFor(info.kind)!, version) as Json;
    schema['x-kubernetes-group-version-kind'] = [gvk(info.kind)];
    out[schemaName(info.kind)] = schema;
    out[schemaName(`${info.kind}List`)] = listSchema(info.kind, version);
  }
  return out;
}

/** The schema of `<Kind>List`, the body of a list call. */
function listSchema(kind: string, version: OpenApiVersion): Json {
  return {
    description: `A list of ${kind} objects.`,
    type: 'object',
    required: ['items'],
    properties: {
      apiVersion: { type: 'string', enum: [API_VERSION] },
      kind: { type: 'string', enum: [`${kind}List`] },
      metadata: {
        type: 'object',
        properties: { resourceVersion: { type: 'string' }, continue: { type: 'string' } },
      },
      items: { type: 'array', items: { $ref: refTo(kind, version) } },
    },
    'x-kubernetes-group-version-kind': [gvk(`${kind}List`)],
  };
}

/** A `$ref` to a kind's (or its list's) schema, for operation bodies. */
export function kindRef(name: string, version: OpenApiVersion): { $ref: string } {
  return { $ref: refTo(name, version) };
}
