/**
 * Server-side printing for kubectl: when a client asks for `as=Table;v=v1;g=meta.k8s.io`, lists, gets and
 * watch events are served as `meta.k8s.io/v1 Table`s whose columns are NAME, the kind's print columns
 * (KindInfo.columns) and AGE, so `kubectl get nodes` prints our columns.
 */
import { humanDuration } from '../../meta/human-duration.ts';
import type { IncomingMessage } from 'node:http';
import { ApiError } from '../../meta/api-error.ts';
import type { KubeObject, Table, TableColumnDefinition, TableRow } from '../../meta/types.ts';
import { ageTimestamp, type KindInfo, type PrintColumn } from '../../v1alpha1/kind-info.ts';
import { evalJsonPath } from '../../v1alpha1/json-path.ts';

/** How rows carry their object (`?includeObject=`). */
export type IncludeObject = 'None' | 'Metadata' | 'Object';

/** The representation a request asked for: plain JSON, or a Table of the given meta.k8s.io version. */
export type Representation = { as: 'json' } | { as: 'table'; apiVersion: string; includeObject: IncludeObject };

/** Reads Accept (and `includeObject`) to decide between plain JSON and a Table; 406 when neither is acceptable. */
export function negotiate(req: IncomingMessage, query: URLSearchParams): Representation {
  const ranges = (req.headers.accept ?? '')
    .split(',')
    .map((r) => r.trim())
    .filter(Boolean);
  if (!ranges.length) return { as: 'json' };
  for (const range of ranges) {
    const [type = '', ...params] = range.split(';').map((s) => s.trim());
    const p = Object.fromEntries(params.map((kv) => kv.split('=').map((s) => s.trim())));
    if (!['application/json', '*/*', 'application/*'].includes(type.toLowerCase())) continue;
    if (!p.as) return { as: 'json' };
    if (p.as === 'Table' && p.g === 'meta.k8s.io' && (p.v === 'v1' || p.v === 'v1beta1')) {
      return { as: 'table', apiVersion: `meta.k8s.io/${p.v}`, includeObject: includeObject(query) };
    }
  }
  throw new ApiError({
    reason: 'NotAcceptable',
    message: `only application/json (optionally as=Table;v=v1;g=meta.k8s.io) is served; got Accept "${req.headers.accept}"`,
  });
}

/** The Content-Type of a Table response. */
export function tableContentType(rep: Extract<Representation, { as: 'table' }>): string {
  return `application/json;as=Table;v=${rep.apiVersion.split('/')[1]};g=meta.k8s.io`;
}

function includeObject(query: URLSearchParams): IncludeObject {
  const v = query.get('includeObject') ?? 'Metadata';
  if (v !== 'None' && v !== 'Metadata' && v !== 'Object')
    throw ApiError.badRequest(`includeObject must be None, Metadata or Object, not "${v}"`);
  return v;
}

/** The column definitions of a kind's Table. */
export function columnDefinitions(info: KindInfo): TableColumnDefinition[] {
  return [
    { name: 'Name', type: 'string', format: 'name', description: 'Name of the object (unique per kind)', priority: 0 },
    ...info.columns.map((c) => ({
      name: c.name,
      type: c.type,
      format: '',
      description: c.description ?? '',
      priority: c.priority ?? 0,
    })),
    {
      name: 'Age',
      type: 'date',
      format: '',
      description: info.ageFrom ? `Time since ${info.ageFrom.join(' or ')}` : 'Time since the object was created',
      priority: 0,
    },
  ];
}

/** One row of a kind's Table for `obj`. */
export function tableRow(info: KindInfo, obj: KubeObject, include: IncludeObject, now = Date.now()): TableRow {
  const cells: TableRow['cells'] = [
    obj.metadata.name ?? '',
    ...info.columns.map((c) => cell(c, obj, now)),
    age(ageTimestamp(info, obj), now),
  ];
  const object =
    include === 'None'
      ? undefined
      : include === 'Object'
        ? obj
        : { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: obj.metadata };
  return { cells, ...(object ? { object } : {}) };
}

/** A whole Table for a list (or a single object). */
export function toTable(
  info: KindInfo,
  objs: KubeObject[],
  rep: Extract<Representation, { as: 'table' }>,
  meta: string | Table['metadata'],
): Table {
  const now = Date.now();
  return {
    kind: 'Table',
    apiVersion: rep.apiVersion,
    metadata: typeof meta === 'string' ? { resourceVersion: meta } : meta,
    columnDefinitions: columnDefinitions(info),
    rows: objs.map((o) => tableRow(info, o, rep.includeObject, now)),
  };
}

function cell(col: PrintColumn, obj: KubeObject, now: number): TableRow['cells'][number] {
  let v: unknown;
  try {
    v = evalJsonPath(obj, col.jsonPath);
  } catch {
    return null;
  }
  if (Array.isArray(v))
    v =
      v.length === 0
        ? undefined
        : v.length === 1
          ? v[0]
          : v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(',');
  if (v === undefined || v === null || v === '') return null;
  if (col.type === 'date') return typeof v === 'string' ? age(v, now) : null;
  if ((col.type === 'integer' || col.type === 'number') && typeof v === 'number') return v;
  if (col.type === 'boolean' && typeof v === 'boolean') return v;
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function age(timestamp: string | undefined, now: number): string {
  const t = timestamp ? Date.parse(timestamp) : NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}
