/**
 * The typed client over HTTP(S): Kubernetes-style paths under `/apis/meshctl.dev/v1alpha1`, merge patch,
 * dry run, and `?watch=1` streams decoded from newline-delimited JSON.
 */
import { ApiError } from '../meta/api-error.ts';
import { GROUP, VERSION, type KubeObject, type Table, type WatchEvent } from '../meta/types.ts';
import { errorFromResponse } from './answers.ts';
import { HttpTransport, type TransportRequest } from './http-transport.ts';
import { decodeNdjson } from './ndjson.ts';
import type {
  Client,
  ClientConfig,
  ClientListOptions,
  ClientWatchOptions,
  ClientWriteOptions,
  WatchStream,
} from './types.ts';

export { isUnreachable } from './http-transport.ts';

const PREFIX = `/apis/${GROUP}/${VERSION}`;

/** A Client that also lets its owner close idle keep-alive connections. */
export interface HttpClient extends Client {
  /**
   * The transport it sends through (its kept-alive connections), for other senders of the same program to share
   * rather than open connections of their own (the agent's log shipper).
   */
  readonly transport: Transport;
  /**
   * A list printed by the server as a `meta.k8s.io/v1` Table, as kubectl asks for it: the cells of its columns instead
   * of whole objects (`includeObject`: None, or Metadata for the labels; Object is not offered).
   */
  listTable(plural: string, opts?: ClientListOptions & { includeObject?: 'None' | 'Metadata' }): Promise<Table>;
  /** Closes idle connections; a process that is done with the client may call it to exit at once. */
  close(): void;
}

/** A streamed answer (a watch): its status code and body chunks; `destroy()` hangs up. */
export interface StreamAnswer extends AsyncIterable<Uint8Array | string> {
  statusCode?: number;
  /**
   * A 2xx watch answer's events as the values themselves, instead of NDJSON in the body: only the control plane's
   * in-process transport (api/server/in-process-values.ts) gives them.
   */
  values?: AsyncIterable<unknown>;
  destroy(): void;
}

/**
 * What the client sends its requests through: HTTP(S) (HttpTransport) or, for the control plane's own
 * controllers, its request handler called in process (api/server/in-process-transport.ts).
 */
export interface Transport {
  /** A plain request: the parsed JSON body of a 2xx answer; rejects with ApiError. */
  json(req: TransportRequest): Promise<unknown>;
  /** A streamed request: resolves once the answer's headers are there (any status code). */
  send(req: TransportRequest): Promise<StreamAnswer>;
  close(): void;
}

/** Creates a client for the control plane described by `cfg` (a loaded meshconfig). */
export function createClient(cfg: ClientConfig): HttpClient {
  return clientOver(new HttpTransport({ config: cfg }));
}

/** The typed client over a transport: the paths, queries and bodies of each verb, and watches. */
export function clientOver(t: Transport): HttpClient {
  // The answer's type is the one the request asks for (each method's signature says which): JSON is untyped.
  const send = <T>(req: TransportRequest): Promise<T> => t.json(req) as Promise<T>;
  return {
    get: (plural, name) => send({ method: 'GET', path: objectPath(plural, name) }),
    list: (plural, opts) => send({ method: 'GET', path: collectionPath(plural) + query(listQuery(opts)) }),
    create: (plural, obj, opts) =>
      send({ method: 'POST', path: collectionPath(plural) + query(writeQuery(opts)), body: obj }),
    update: (plural, obj, opts) =>
      send({ method: 'PUT', path: objectPath(plural, obj.metadata.name) + query(writeQuery(opts)), body: obj }),
    updateStatus: (plural, obj, opts) =>
      send({
        method: 'PUT',
        path: objectPath(plural, obj.metadata.name) + '/status' + query(writeQuery(opts)),
        body: obj,
      }),
    patch: (plural, name, patch, opts) =>
      send({
        method: 'PATCH',
        path: objectPath(plural, name) + (opts?.subresource ? `/${opts.subresource}` : '') + query(writeQuery(opts)),
        body: patch,
        contentType: 'application/merge-patch+json',
      }),
    delete: (plural, name, opts) =>
      send({
        method: 'DELETE',
        path: objectPath(plural, name) + query({ ...writeQuery(opts), propagationPolicy: opts?.propagationPolicy }),
      }),
    watch: (plural, opts) => openWatch(t, plural, opts),
    raw: (path) => t.json({ method: 'GET', path }),
    listTable: (plural, opts) =>
      send({
        method: 'GET',
        path: collectionPath(plural) + query({ ...listQuery(opts), includeObject: opts?.includeObject ?? 'None' }),
        accept: TABLE_ACCEPT,
      }),
    transport: t,
    close: () => t.close(),
  };
}

/** What a Table request accepts: a v1 Table (the answer to a server that cannot print one is a 406). */
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io';

function collectionPath(plural: string): string {
  if (!plural) throw new ApiError({ reason: 'BadRequest', message: 'a resource type is required' });
  return `${PREFIX}/${encodeURIComponent(plural)}`;
}

function objectPath(plural: string, name: string | undefined): string {
  if (!name) throw new ApiError({ reason: 'BadRequest', message: `a name is required to address one of ${plural}` });
  return `${collectionPath(plural)}/${encodeURIComponent(name)}`;
}

function listQuery(opts: ClientListOptions | undefined): Record<string, string | undefined> {
  return { labelSelector: opts?.labelSelector || undefined, fieldSelector: opts?.fieldSelector || undefined };
}

function writeQuery(opts: ClientWriteOptions | undefined): Record<string, string | undefined> {
  return { dryRun: opts?.dryRun ? 'All' : undefined };
}

function query(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Opens a watch; an HTTP 410 answer becomes a single ERROR event carrying the `Status`, as the contract says. */
async function openWatch<T extends KubeObject>(
  t: Transport,
  plural: string,
  opts: ClientWatchOptions | undefined,
): Promise<WatchStream<T>> {
  const q = query({
    watch: '1',
    ...listQuery(opts),
    resourceVersion: opts?.resourceVersion,
    allowWatchBookmarks: opts?.allowWatchBookmarks ? 'true' : undefined,
    omitStatusUpdates: opts?.omitStatusUpdates ? 'true' : undefined,
  });
  const res = await t.send({ method: 'GET', path: collectionPath(plural) + q, stream: true });
  const code = res.statusCode ?? 0;
  if (code < 200 || code >= 300) {
    const err = errorFromResponse(code, await readText(res).catch(() => ''));
    if (code !== 410) throw err;
    const event: WatchEvent<T> = { type: 'ERROR', object: err.toStatus() };
    return {
      events: (async function* () {
        yield event;
      })(),
      close: () => undefined,
    };
  }
  return watchStream<T>(res);
}

/** Reads a whole streamed answer as UTF-8 text. */
async function readText(res: StreamAnswer): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of res) text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
  return text + decoder.decode();
}

/** Wraps a 200 watch response: events end when the server closes the stream or the owner calls close(). */
function watchStream<T extends KubeObject>(res: StreamAnswer): WatchStream<T> {
  let closed = false;
  async function* events(): AsyncGenerator<WatchEvent<T>> {
    try {
      for await (const value of res.values ?? decodeNdjson(res)) yield value as WatchEvent<T>;
    } catch (e) {
      if (closed || !(e instanceof SyntaxError)) return; // closed by us, or the connection dropped: the stream ends
      throw new ApiError({ reason: 'InternalError', message: e.message });
    } finally {
      res.destroy();
    }
  }
  return {
    events: events(),
    close() {
      closed = true;
      res.destroy();
    },
  };
}
