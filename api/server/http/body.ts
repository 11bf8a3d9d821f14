/**
 * Reads and parses request bodies: a size limit enforced while streaming (413 without buffering the
 * oversized body), JSON or YAML by Content-Type, and a nesting-depth limit so no body can exhaust the stack.
 */
import type { IncomingMessage } from 'node:http';
import { parse as parseYaml } from 'yaml';
import { ApiError, type LimitName } from '../../meta/api-error.ts';
import { jsonCopy } from '../../meta/frozen.ts';
import { valueBody } from '../in-process-values.ts';
import { jsonDeeperThan, yamlDeeperThan } from './nesting.ts';

/** The default request body limit: 3 MiB, as kube-apiserver's. */
export const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;
/** How deep a body may nest objects and arrays; measured before parsing (nesting.ts), and after, for aliases. */
const MAX_DEPTH = 100;
/** The largest YAML body: no client of ours sends YAML, and the parser's time grows faster than its input. */
export const MAX_YAML_BYTES = 1024 * 1024;
/** How many alias nodes (`*a`) a YAML body may use: bounds the expansion of an alias bomb. */
const MAX_YAML_ALIASES = 50;
/** After a 413, how much more of the body is read and discarded (keeps the connection usable) before hanging up. */
const DRAIN_FACTOR = 4;
const MIN_DRAIN_BYTES = 8 * 1024 * 1024;

function tooLarge(max: number, what = '', limit: LimitName = 'body_size'): ApiError {
  return new ApiError({
    reason: 'RequestEntityTooLarge',
    message: `the ${what}request body is larger than the limit of ${max} bytes`,
    limit,
  });
}

function tooDeep(): ApiError {
  return ApiError.badRequest(`the request body nests deeper than ${MAX_DEPTH} levels`, 'parser_depth');
}

/**
 * Reads the whole body, rejecting with 413 as soon as it passes `maxBytes` (the rest is discarded). A body a client
 * in this process handed over as a value (in-process-values.ts) is read as its JSON text.
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const sent = valueBody(req);
  if (sent) return Promise.resolve(Buffer.from(JSON.stringify(sent.v)));
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > maxBytes) return drain(req, maxBytes).then(() => Promise.reject(tooLarge(maxBytes)));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      req.off('data', onData);
      void drain(req, maxBytes).then(() => reject(tooLarge(maxBytes)));
    };
    req.on('data', onData);
    req.once('end', () => {
      if (size <= maxBytes) resolve(Buffer.concat(chunks, size));
    });
    req.once('error', () => reject(ApiError.badRequest('the request body could not be read')));
    req.once('close', () => {
      if (!req.complete && size <= maxBytes)
        reject(ApiError.badRequest('the client closed the connection before the body was complete'));
    });
  });
}

/**
 * Discards the rest of an oversized body; resolves when it has ended, or has gone on for too long. The 413 is
 * sent only then: Node closes a connection whose response ends before its request, and the client, still
 * sending, would see EPIPE instead of the answer. Past twice the limit, the connection is cut.
 */
function drain(req: IncomingMessage, maxBytes: number): Promise<void> {
  const limit = Math.max(DRAIN_FACTOR * maxBytes, MIN_DRAIN_BYTES);
  return new Promise((resolve) => {
    let discarded = 0;
    req.on('data', (chunk: Buffer) => {
      discarded += chunk.length;
      if (discarded > limit) resolve();
      if (discarded > 2 * limit) req.socket.destroy();
    });
    req.once('end', () => resolve());
    req.once('close', () => resolve());
    req.resume();
  });
}

/** The body formats a write accepts. */
export type BodyFormat = 'json' | 'yaml' | 'merge-patch' | 'json-patch' | 'apply-patch';

/** The Content-Type of each body format (the first one is named in a 415). */
export const CONTENT_TYPES: Record<BodyFormat, string[]> = {
  json: ['application/json', ''],
  yaml: ['application/yaml', 'application/x-yaml', 'text/yaml'],
  'merge-patch': ['application/merge-patch+json'],
  'json-patch': ['application/json-patch+json'],
  'apply-patch': ['application/apply-patch+yaml'],
};

/** Decides how to parse a body from its Content-Type; undefined when the type is not one of `accepted`. */
export function bodyFormat(contentType: string | undefined, accepted: BodyFormat[]): BodyFormat | undefined {
  const type = (contentType ?? 'application/json').split(';')[0].trim().toLowerCase();
  return accepted.find((f) => CONTENT_TYPES[f].includes(type));
}

/**
 * Parses a body as one JSON object (JSON and merge patch) or one YAML document (YAML, apply patch); 400
 * BadRequest otherwise. A JSON patch is an array: readJsonPatchBody.
 */
export function parseBody(buf: Buffer, format: BodyFormat): Record<string, unknown> {
  return objectBody(parseValue(buf, format));
}

/**
 * Reads and parses a body in `format` as one object (parseBody). A body a client in this process handed over as a
 * value is copied instead (jsonCopy: what parsing its JSON text would have made, the handler's to change), without
 * the text: our controllers' writes are not encoded, measured and parsed on their way into the store.
 */
export async function readObjectBody(
  req: IncomingMessage,
  maxBytes: number,
  format: BodyFormat,
): Promise<Record<string, unknown>> {
  return objectBody(await readValue(req, maxBytes, format));
}

/**
 * Reads and parses an `application/json-patch+json` body: a JSON array of operations (400 otherwise); one handed
 * over in process is copied, as readObjectBody does.
 */
export async function readJsonPatchBody(req: IncomingMessage, maxBytes: number): Promise<unknown[]> {
  return jsonPatchBody(await readValue(req, maxBytes, 'json-patch'));
}

/** The body parsed, or the copy of the one a client in this process handed over as a value. */
async function readValue(req: IncomingMessage, maxBytes: number, format: BodyFormat): Promise<unknown> {
  const sent = valueBody(req);
  return sent ? jsonCopy(sent.v) : parseValue(await readBody(req, maxBytes), format);
}

function objectBody(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw ApiError.badRequest('the request body must be a single object');
  }
  return value as Record<string, unknown>;
}

function jsonPatchBody(value: unknown): unknown[] {
  if (!Array.isArray(value)) throw ApiError.badRequest('a JSON patch must be a JSON array of operations');
  return value;
}

function parseValue(buf: Buffer, format: BodyFormat): unknown {
  const yaml = format === 'yaml' || format === 'apply-patch';
  if (yaml && buf.length > MAX_YAML_BYTES) throw tooLarge(MAX_YAML_BYTES, 'YAML ', 'parser_size');
  const text = buf.toString('utf8');
  let value: unknown;
  try {
    if (yaml ? yamlDeeperThan(text, MAX_DEPTH) : jsonDeeperThan(text, MAX_DEPTH)) throw tooDeep();
    value = yaml ? parseYaml(text, { maxAliasCount: MAX_YAML_ALIASES }) : JSON.parse(text);
  } catch (e) {
    if (e instanceof ApiError) throw e;
    const message = firstLine((e as Error).message);
    const aliases = yaml && /alias count/i.test(message) ? 'parser_aliases' : undefined;
    throw ApiError.badRequest(`the request body is not valid ${yaml ? 'YAML' : 'JSON'}: ${message}`, aliases);
  }
  // Only YAML can nest deeper than its text shows (aliases); JSON's depth was bounded by the scan above.
  if (yaml && depth(value) > MAX_DEPTH) throw tooDeep();
  return value;
}

function firstLine(s: string): string {
  const line = s.split('\n')[0] ?? '';
  return line.length > 200 ? line.slice(0, 200) + '…' : line;
}

/** The nesting depth of a parsed value, without recursion. */
function depth(root: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (d > max) max = d;
    if (max > MAX_DEPTH) return max;
    for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}
