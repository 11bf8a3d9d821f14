/**
 * A small HTTP/1.1 client over `node:tls` (https) or `node:net` (http) for the typed client's plain requests: it
 * writes one request whose body is known in full and reads one whole answer — status line, headers, and a body
 * delimited by Content-Length, chunked transfer coding or the end of the connection. It exists for start-up time:
 * `node:https` and Node's HTTP machinery cost every `meshctl` run several milliseconds more than `node:tls` alone
 * (bench/RESULTS.md §3), and a one-shot command needs none of it. Connections are kept alive and reused one request
 * at a time, as Node's keep-alive agent does; idle ones do not keep the process alive. With `maxSockets`, a request
 * that finds every connection busy or being opened waits for one instead of opening another (an agent holds one);
 * the requests waiting while a connection is opened share its failure.
 */
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import { parseAnswer, type Http1Answer } from './http1-parse.ts';
import { connectTls, connectUnix } from './connect.ts';

export type { Http1Answer } from './http1-parse.ts';

/**
 * Idle time before the kernel probes a kept connection (TCP keep-alive). Node's agent uses 1 s, which probes every
 * idle connection every second: an agent's connection idles 10 s between heartbeats, and 1,000 idle connections
 * were 2,000 packets a second of probes and their ACKs. The server closes connections idle for 90 s anyway.
 */
export const TCP_KEEPALIVE_MS = 60_000;

/** What a request needs besides its line and headers. */
export interface Http1Options {
  /** `https:` or `http:` */
  protocol: string;
  /** Host name or IP address, without brackets. */
  hostname: string;
  port: number;
  /** PEM of the CA the server must be signed by (https; default Node's root certificates). */
  ca?: string;
  /** Socket inactivity (connecting or waiting for the answer) after which the request fails with ETIMEDOUT. */
  timeoutMs: number;
  /** How long opening an https connection (TCP, then the TLS handshake) may take. Default `timeoutMs`. */
  connectTimeoutMs?: number;
  /** Connections at most, open or being opened. Default: no bound. */
  maxSockets?: number;
  /** A local Unix socket serving the same API without TLS, tried first (connect.ts). */
  socketPath?: string;
}

/** One request: the head is written as given (names lower-case), then the body. */
export interface Http1Request {
  method: string;
  path: string;
  headers: Record<string, string | number>;
  body?: string;
}

/** Loads a built-in module when first needed (a static import would load it at start-up, also for `--help`). */
const load = createRequire(import.meta.url);
const net = (): typeof import('node:net') => load('node:net') as typeof import('node:net');

/** Sends requests to one server over kept-alive connections; `close()` ends them all. */
export class Http1Client {
  readonly #opts: Http1Options;
  readonly #idle: Socket[] = [];
  readonly #all = new Set<Socket>();
  /** The last TLS session the server offered: a new connection resumes it (as node:https's agent does). */
  #session?: Buffer;
  /** Connections being opened. */
  #opening = 0;
  /** Requests waiting for a connection (maxSockets reached). */
  #waiters: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  /** The local Unix socket, until connecting to it failed once; from then on connections go to hostname:port. */
  #socketPath?: string;

  constructor(opts: Http1Options) {
    this.#opts = opts;
    this.#socketPath = opts.socketPath;
  }

  /**
   * Sends a request and resolves with the whole answer. A kept-alive connection that the server closed while it
   * was idle fails before any answer arrives; such a request is sent once more on a fresh connection.
   */
  async request(req: Http1Request, retryReused = true): Promise<Http1Answer> {
    const { socket, reused } = await this.#acquire();
    try {
      return await this.#exchange(socket, req);
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (reused && retryReused && (code === 'ECONNRESET' || code === 'EPIPE')) return this.request(req, false);
      throw e;
    }
  }

  /** The local socket while it is still believed usable (no connection to it has failed yet), else undefined. */
  get socketPath(): string | undefined {
    return this.#socketPath;
  }

  /** Stops using the local socket (a stream found it gone or refused): hostname:port from now on. */
  forgetSocket(): void {
    this.#socketPath = undefined;
  }

  /** Closes every connection, idle or busy (a busy request fails, so does one waiting for a connection). */
  close(): void {
    for (const s of this.#all) s.destroy();
    this.#all.clear();
    this.#idle.length = 0;
    for (const w of this.#waiters.splice(0))
      w.reject(Object.assign(new Error('client closed'), { code: 'ECONNRESET' }));
  }

  /** An idle connection, or a new one when under maxSockets; otherwise waits until one is released or closed. */
  async #acquire(): Promise<{ socket: Socket; reused: boolean }> {
    for (;;) {
      const idle = this.#idle.pop();
      if (idle) return { socket: idle.ref(), reused: true };
      if (this.#all.size + this.#opening < (this.#opts.maxSockets ?? Infinity)) {
        this.#opening++;
        try {
          const socket = await this.#connect();
          this.#opening--;
          return { socket, reused: false };
        } catch (e) {
          this.#opening--;
          for (const w of this.#waiters.splice(0)) w.reject(e);
          throw e;
        }
      }
      await new Promise<void>((resolve, reject) => this.#waiters.push({ resolve, reject }));
    }
  }

  /** A connection was released or closed: the first waiting request may take it (or open one). */
  #wakeOne(): void {
    this.#waiters.shift()?.resolve();
  }

  async #connect(): Promise<Socket> {
    const o = this.#opts;
    const local = await this.#connectLocal();
    const socket =
      local ??
      (o.protocol === 'https:'
        ? await connectTls(o, this.#session, (s) => (this.#session = s))
        : net().connect({ host: o.hostname, port: o.port }));
    this.#all.add(socket);
    socket.setNoDelay(true); // as node:http's requests do: a request is written whole, never held back (Nagle)
    // Errors while a request is out reach its listener; one while idle only closes the connection.
    socket.on('error', () => undefined);
    socket.once('close', () => {
      this.#all.delete(socket);
      const i = this.#idle.indexOf(socket);
      if (i >= 0) this.#idle.splice(i, 1);
      this.#wakeOne();
    });
    return socket;
  }

  /** A connection to the local socket, or undefined (none configured, or it failed: never tried again). */
  async #connectLocal(): Promise<Socket | undefined> {
    if (!this.#socketPath) return undefined;
    try {
      return await connectUnix(this.#socketPath, this.#opts.connectTimeoutMs ?? this.#opts.timeoutMs);
    } catch {
      this.#socketPath = undefined; // gone, refused or not ours: the server URL gives the same answers
      return undefined;
    }
  }

  /** Writes the request and reads the answer; keeps the socket for the next request when the answer allows. */
  #exchange(socket: Socket, req: Http1Request): Promise<Http1Answer> {
    const ms = this.#opts.timeoutMs;
    return new Promise<Http1Answer>((resolve, reject) => {
      const parse = parseAnswer(req.method);
      const done = (err: Error | undefined, answer?: Http1Answer): void => {
        socket
          .off('data', onData)
          .off('end', onEnd)
          .off('error', onError)
          .off('timeout', onTimeout)
          .off('close', onEnd);
        socket.setTimeout(0);
        if (err || !answer) {
          socket.destroy();
          reject(err ?? new Error('no answer'));
          return;
        }
        if (answer.keepAlive && !socket.destroyed) this.#release(socket);
        else socket.destroy();
        resolve(answer);
      };
      const onData = (chunk: Buffer): void => {
        try {
          const answer = parse.push(chunk);
          if (answer) done(undefined, answer);
        } catch (e) {
          done(e as Error);
        }
      };
      const onEnd = (): void => {
        const answer = parse.end();
        if (answer) done(undefined, { ...answer, keepAlive: false });
        else if (parse.started()) done(new Error('the server closed the connection in the middle of its answer'));
        else done(connectionError());
      };
      const onError = (e: Error): void => done(e);
      const onTimeout = (): void =>
        done(Object.assign(new Error(`no answer within ${ms / 1000}s`), { code: 'ETIMEDOUT' }));
      socket.on('data', onData).on('end', onEnd).on('close', onEnd).on('error', onError).on('timeout', onTimeout);
      socket.setTimeout(ms);
      socket.write(head(req, this.#opts) + (req.body ?? ''));
    });
  }

  /** Keeps an answered connection for the next request; it does not keep the process alive meanwhile. */
  #release(socket: Socket): void {
    socket.setKeepAlive(true, TCP_KEEPALIVE_MS);
    socket.unref();
    this.#idle.push(socket);
    this.#wakeOne();
  }
}

/** The error of a connection closed before any answer (as Node's; a reused connection's request is sent again). */
function connectionError(): NodeJS.ErrnoException {
  return Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
}

/** The request line and headers. */
function head(req: Http1Request, o: Http1Options): string {
  const host = o.hostname.includes(':') ? `[${o.hostname}]` : o.hostname;
  const defaultPort = o.protocol === 'https:' ? 443 : 80;
  let text = `${req.method} ${req.path} HTTP/1.1\r\nhost: ${host}${o.port === defaultPort ? '' : `:${o.port}`}\r\n`;
  for (const [name, value] of Object.entries(req.headers)) text += `${name}: ${value}\r\n`;
  if (req.body !== undefined && req.headers['content-length'] === undefined)
    text += `content-length: ${Buffer.byteLength(req.body)}\r\n`;
  return text + '\r\n';
}
