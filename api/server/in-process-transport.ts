/**
 * The control plane's controllers as clients of its own API, without a socket: each request becomes an
 * IncomingMessage and a ServerResponse handed to the app's handler (App.handle) in this process. It goes through
 * everything a request over HTTPS goes through — authentication (the admin token it carries), authorization, the
 * in-flight limits, admission and validation, the store, watches — but costs no TLS, no HTTP framing and parsing
 * and no system call. The answer's body is handed over as the handler writes it (a PassThrough the client reads;
 * a watch's backpressure is that stream's). A 2xx JSON answer and a JSON watch's events are handed over as the
 * objects themselves, frozen, instead of text encoded here and decoded there (in-process-values.ts). Agents,
 * meshctl and kubectl keep using HTTPS.
 */
import { IncomingMessage, ServerResponse, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { clientOver, type HttpClient, type StreamAnswer, type Transport } from '../client/http-client.ts';
import { jsonAnswer, type PlainAnswer } from '../client/answers.ts';
import type { TransportRequest } from '../client/http-transport.ts';
import type { ClientConfig } from '../client/types.ts';
import { ApiError } from '../meta/api-error.ts';
import type { App } from './app.ts';
import { bodyFormat, type BodyFormat } from './http/body.ts';
import { VALUE_BODY, VALUE_SINK, type ValueRequest, type ValueSink } from './in-process-values.ts';

/** Options of createInProcessClient. */
export interface InProcessClientOptions {
  /** The API server's handler. */
  app: Pick<App, 'handle'>;
  /** The bearer token the requests carry (the admin's, from its meshconfig) and the client's retry settings. */
  config: Pick<ClientConfig, 'token' | 'maxRetries' | 'clock' | 'onWarning'>;
}

/** A typed client whose requests the app's handler serves in this process (see the module comment). */
export function createInProcessClient(opts: InProcessClientOptions): HttpClient {
  return clientOver(new InProcessTransport(opts));
}

/** The status and headers of an answer, once the handler has written them. */
interface Head {
  statusCode: number;
  headers: Record<string, string[]>;
}

/** Serves each request by calling the app's handler. */
class InProcessTransport implements Transport {
  readonly #opts: InProcessClientOptions;
  /**
   * The one unconnected socket every request of this client names as its connection, as a kept-alive HTTPS
   * connection would be: what the server keeps per connection (the bearer token's hash, api/server/access/auth.ts)
   * is computed once, not at every request.
   */
  readonly #socket = idleSocket();

  constructor(opts: InProcessClientOptions) {
    this.#opts = opts;
  }

  json(req: TransportRequest): Promise<unknown> {
    return jsonAnswer({ server: 'in-process', ...this.#opts.config }, () => this.#plain(req));
  }

  async #plain(req: TransportRequest): Promise<PlainAnswer> {
    const { head, res } = this.#dispatch(req);
    const { statusCode, headers } = await head;
    // A value is the whole answer (sendValue wrote no bytes): nothing to read. As with a body read to its end, the
    // request is over on the server (its in-flight slot given back) when the client has the answer.
    if (res.value) {
      await res.whenClosed();
      return { statusCode, headers, body: '', value: res.value.v };
    }
    const chunks: Buffer[] = [];
    for await (const chunk of res.out) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    return { statusCode, headers, body: Buffer.concat(chunks).toString('utf8') };
  }

  async send(req: TransportRequest): Promise<StreamAnswer> {
    const { head, res } = this.#dispatch(req);
    const { statusCode } = await head;
    const values = res.values;
    return {
      statusCode,
      [Symbol.asyncIterator]: () => res.out[Symbol.asyncIterator](),
      ...(values ? { values: { [Symbol.asyncIterator]: () => values[Symbol.asyncIterator]() } } : {}),
      destroy: () => void res.destroy(),
    };
  }

  /** Hands the request to the app; `head` resolves once the handler wrote the status and headers. */
  #dispatch(req: TransportRequest): { head: Promise<Head>; res: InProcessResponse } {
    const msg = requestMessage(req, this.#opts.config.token, this.#socket);
    let res!: InProcessResponse;
    const head = new Promise<Head>((resolve, reject) => {
      res = new InProcessResponse(msg, (h) => (h instanceof Error ? reject(h) : resolve(h)));
    });
    this.#opts.app.handle(msg, res);
    return { head, res };
  }

  close(): void {}
}

/** The body formats that are JSON text: such a body is handed over as the value itself (valueBody). */
const JSON_FORMATS: BodyFormat[] = ['json', 'merge-patch', 'json-patch'];

/**
 * The request as the handler reads it: method, path, headers (the bearer token's included) and the body — a JSON
 * body as the value itself (in-process-values.ts), which the handler copies instead of parsing text.
 */
function requestMessage(req: TransportRequest, token: string | undefined, socket: Socket): IncomingMessage {
  const asValue = req.body !== undefined && bodyFormat(req.contentType, JSON_FORMATS) !== undefined;
  const body = req.body === undefined || asValue ? undefined : Buffer.from(JSON.stringify(req.body));
  const msg: ValueRequest = new IncomingMessage(socket);
  if (asValue) msg[VALUE_BODY] = { v: req.body };
  msg.method = req.method;
  msg.url = req.path;
  msg.httpVersion = '1.1';
  msg.httpVersionMajor = 1;
  msg.httpVersionMinor = 1;
  msg.headers = {
    accept: req.accept ?? 'application/json',
    'user-agent': 'meshctl-in-process',
    ...(token ? { authorization: `Bearer ${token}` } : {}),
    ...(req.body !== undefined ? { 'content-type': req.contentType ?? 'application/json' } : {}),
    ...(body ? { 'content-length': String(body.length) } : {}),
  };
  if (body) msg.push(body);
  msg.push(null);
  msg.complete = true;
  return msg;
}

/** A socket that connects nowhere and has nothing to read: each request's body is its message's (pushed, or a value). */
function idleSocket(): Socket {
  const socket = new Socket();
  socket.readable = false;
  return socket;
}

type WriteCallback = (error?: Error | null) => void;

/** How many watch events a client in this process may have unread before the watch waits for it (`drain`). */
const VALUES_BUFFERED = 1024;

/**
 * A ServerResponse whose bytes go to `out` instead of a socket: the headers are kept by the base class and reported
 * once (`onHead`; destroyed before that, a ServiceUnavailable error); `close` is emitted once, after `end()` or when
 * either side destroys it. `out` is made when first written or read: an answer sent as a value (the controllers'
 * reads and writes) never has one.
 */
class InProcessResponse extends ServerResponse implements ValueSink {
  /** The JSON body handed over as a value (sendValue), when the handler answered so. */
  value?: { v: unknown };
  /** The values of a stream that writes values (streamValues), as the client reads them. */
  values?: PassThrough;
  readonly [VALUE_SINK]: ValueSink = this;
  readonly #onHead: (head: Head | ApiError) => void;
  #out?: PassThrough;
  /** Why it was destroyed, for an `out` made after that. */
  #destroyError?: Error;
  #sent = false;
  #ended = false;
  #closed = false;
  #whenClosed?: Promise<void>;
  #onClosed?: () => void;

  static {
    // The base class reads these from its socket; here they describe `out`. Defined once on the prototype: per
    // instance, each response would be turned into a dictionary-mode object.
    Object.defineProperties(InProcessResponse.prototype, {
      headersSent: {
        get(this: InProcessResponse) {
          return this.#sent;
        },
      },
      writableEnded: {
        get(this: InProcessResponse) {
          return this.#ended;
        },
      },
      writableLength: {
        get(this: InProcessResponse) {
          return this.#out ? this.#out.writableLength + this.#out.readableLength : 0;
        },
      },
    });
  }

  constructor(req: IncomingMessage, onHead: (head: Head | ApiError) => void) {
    super(req);
    this.#onHead = onHead;
  }

  /** The body, as the client reads it. */
  get out(): PassThrough {
    if (!this.#out) {
      const out = new PassThrough();
      out.on('drain', () => this.emit('drain'));
      out.on('close', () => this.#close());
      if (this.destroyed) out.destroy(this.#destroyError);
      else if (this.#ended) out.end();
      this.#out = out;
    }
    return this.#out;
  }

  override writeHead(
    statusCode: number,
    a?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    b?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    if (this.#sent) return this;
    this.statusCode = statusCode;
    const headers = typeof a === 'string' ? b : a;
    for (const [name, value] of headerPairs(headers)) this.setHeader(name, value);
    this.#sent = true;
    this.#onHead({ statusCode, headers: headerLists(this.getHeaders()) });
    return this;
  }

  sendValue(code: number, value: unknown, headers: Record<string, string>): void {
    this.value = { v: value };
    this.writeHead(code, headers);
    this.end();
  }

  streamValues(): void {
    this.values ??= new PassThrough({ objectMode: true, highWaterMark: VALUES_BUFFERED });
    this.values.on('drain', () => this.emit('drain'));
  }

  writeValue(value: unknown): boolean {
    this.writeHead(this.statusCode);
    if (this.#ended || !this.values || this.values.destroyed) return false;
    return this.values.write(value);
  }

  override flushHeaders(): void {
    this.writeHead(this.statusCode);
  }

  override write(chunk: string | Uint8Array, a?: BufferEncoding | WriteCallback, b?: WriteCallback): boolean {
    this.writeHead(this.statusCode);
    if (this.#ended || this.out.destroyed) return false;
    return typeof a === 'string' ? this.out.write(chunk, a, b) : this.out.write(chunk, a);
  }

  override end(a?: string | Uint8Array | (() => void), b?: BufferEncoding | (() => void), c?: () => void): this {
    this.writeHead(this.statusCode);
    if (this.#ended) return this;
    const data = a !== undefined && typeof a !== 'function' ? a : undefined;
    const done = [a, b, c].find((x) => typeof x === 'function');
    this.values?.end();
    const finished = (): void => {
      this.emit('finish');
      done?.();
      this.#close();
    };
    if (!this.#out && data === undefined) {
      // Nothing was written and nothing is: no stream to end (the answer is a value, or empty).
      this.#ended = true;
      process.nextTick(finished);
      return this;
    }
    const out = this.out;
    this.#ended = true;
    if (data !== undefined && !out.destroyed) {
      if (typeof b === 'string') out.write(data, b);
      else out.write(data);
    }
    out.end(finished);
    return this;
  }

  override destroy(error?: Error): this {
    if (!this.#sent) {
      // Hung up before answering: what a client sees when the connection drops.
      this.#sent = true;
      this.#onHead(
        new ApiError({ reason: 'ServiceUnavailable', message: 'the API closed the request without answering' }),
      );
    }
    this.destroyed = true;
    this.#destroyError = error;
    this.values?.destroy(error);
    this.#out?.destroy(error);
    this.#close();
    return this;
  }

  /** Resolves once `close` was emitted. */
  whenClosed(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return (this.#whenClosed ??= new Promise((resolve) => (this.#onClosed = resolve)));
  }

  #close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.emit('close');
    this.#onClosed?.();
  }
}

/** The name/value pairs of writeHead's headers (an object, or the raw `[name, value, …]` list). */
function headerPairs(
  headers: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined,
): Array<[string, OutgoingHttpHeader]> {
  if (!headers) return [];
  if (!Array.isArray(headers)) {
    const out: Array<[string, OutgoingHttpHeader]> = [];
    for (const [name, value] of Object.entries(headers)) if (value !== undefined) out.push([name, value]);
    return out;
  }
  const out: Array<[string, OutgoingHttpHeader]> = [];
  for (let i = 0; i + 1 < headers.length; i += 2) out.push([String(headers[i]), headers[i + 1]]);
  return out;
}

/** Header values by lower-case name, each a list of strings (the client's shape of them). */
function headerLists(headers: OutgoingHttpHeaders): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name.toLowerCase()] = Array.isArray(value) ? value.map(String) : [String(value)];
  return out;
}
