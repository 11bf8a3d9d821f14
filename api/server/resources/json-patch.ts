/**
 * JSON Patch (RFC 6902), the body of `application/json-patch+json`: `add`, `remove`, `replace`, `move`,
 * `copy` and `test`, applied in order to a copy of the object; one failing operation fails the whole patch.
 * Errors read as kube-apiserver's: a malformed patch is 400 BadRequest, an operation that cannot apply (a
 * missing path, a failed `test`) is 422.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError } from '../../meta/api-error.ts';

type Container = Record<string, unknown> | unknown[];

interface Operation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string[];
  from?: string[];
  value?: unknown;
}

const OPS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/** Applies a parsed JSON patch to `doc` (not changed); returns the patched document. */
export function applyJsonPatch(doc: unknown, patch: unknown[]): unknown {
  let out = structuredClone(doc);
  patch.forEach((raw, i) => {
    out = applyOne(out, parseOperation(raw, i));
  });
  return out;
}

function parseOperation(raw: unknown, i: number): Operation {
  const o = raw as Record<string, unknown> | null;
  if (o === null || typeof o !== 'object' || Array.isArray(o) || typeof o.op !== 'string' || !OPS.has(o.op))
    throw ApiError.badRequest(`JSON patch operation ${i}: "op" must be one of ${[...OPS].join(', ')}`);
  const op = o.op as Operation['op'];
  if (typeof o.path !== 'string') throw ApiError.badRequest(`JSON patch operation ${i} (${op}): "path" is missing`);
  const parsed: Operation = { op, path: pointer(o.path, i) };
  if (op === 'move' || op === 'copy') {
    if (typeof o.from !== 'string') throw ApiError.badRequest(`JSON patch operation ${i} (${op}): "from" is missing`);
    parsed.from = pointer(o.from, i);
  }
  if (op === 'add' || op === 'replace' || op === 'test') {
    if (!Object.hasOwn(o, 'value')) throw ApiError.badRequest(`JSON patch operation ${i} (${op}): "value" is missing`);
    parsed.value = o.value;
  }
  return parsed;
}

/** An RFC 6901 pointer as its reference tokens. */
function pointer(text: string, i: number): string[] {
  if (text === '') return [];
  if (!text.startsWith('/')) throw ApiError.badRequest(`JSON patch operation ${i}: "${text}" is not a JSON pointer`);
  return text
    .slice(1)
    .split('/')
    .map((t) => t.replace(/~1/g, '/').replace(/~0/g, '~'));
}

function unprocessable(message: string): ApiError {
  return new ApiError({ reason: 'Invalid', message });
}

function show(path: string[]): string {
  return '/' + path.map((t) => t.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
}

function get(doc: unknown, path: string[]): unknown {
  let cur = doc;
  for (const t of path) {
    if (cur === null || typeof cur !== 'object') throw unprocessable(`the path ${show(path)} does not exist`);
    const c = cur as Container;
    if (Array.isArray(c) ? !/^(0|[1-9]\d*)$/.test(t) || Number(t) >= c.length : !Object.hasOwn(c, t))
      throw unprocessable(`the path ${show(path)} does not exist`);
    cur = Array.isArray(c) ? c[Number(t)] : c[t];
  }
  return cur;
}

/** The container of the last token and the token; the container must exist. */
function parentOf(doc: unknown, path: string[]): [Container, string] {
  const parent = get(doc, path.slice(0, -1));
  if (parent === null || typeof parent !== 'object')
    throw unprocessable(`the path ${show(path)} does not exist: its parent is not an object or array`);
  return [parent as Container, path[path.length - 1]];
}

function index(arr: unknown[], t: string, path: string[], forAdd: boolean): number {
  if (forAdd && t === '-') return arr.length;
  const n = /^(0|[1-9]\d*)$/.test(t) ? Number(t) : NaN;
  if (Number.isNaN(n) || n > arr.length || (!forAdd && n === arr.length))
    throw unprocessable(`the index in ${show(path)} is out of range`);
  return n;
}

function add(doc: unknown, path: string[], value: unknown): unknown {
  if (path.length === 0) return value;
  const [parent, t] = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(index(parent, t, path, true), 0, value);
  else parent[t] = value;
  return doc;
}

function remove(doc: unknown, path: string[]): unknown {
  if (path.length === 0) throw unprocessable('the whole document cannot be removed');
  get(doc, path);
  const [parent, t] = parentOf(doc, path);
  if (Array.isArray(parent)) parent.splice(index(parent, t, path, false), 1);
  else delete parent[t];
  return doc;
}

function applyOne(doc: unknown, op: Operation): unknown {
  switch (op.op) {
    case 'add':
      return add(doc, op.path, op.value);
    case 'remove':
      return remove(doc, op.path);
    case 'replace':
      return op.path.length === 0 ? op.value : add(remove(doc, op.path), op.path, op.value);
    case 'move': {
      const value = get(doc, op.from!);
      return add(remove(doc, op.from!), op.path, value);
    }
    case 'copy':
      return add(doc, op.path, structuredClone(get(doc, op.from!)));
    case 'test':
      if (!isDeepStrictEqual(get(doc, op.path), op.value))
        throw unprocessable(`the test of ${show(op.path)} failed: the value is not ${JSON.stringify(op.value)}`);
      return doc;
  }
}
