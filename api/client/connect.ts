/**
 * Opening the HTTP/1.1 client's connections (http1.ts): TLS to the server URL, verified against the CA; or the
 * control plane's local Unix domain socket (the admin meshconfig's `meshctl.dev/local-socket` extension): on the
 * control plane's own machine the API is also served there, without TLS (the kernel protects local IPC, and the
 * socket is 0600 in a 0700 directory of the control plane's user), so a one-shot command never loads `node:tls` nor
 * makes a handshake. The bearer token is sent and checked as over HTTPS.
 */
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';
import type { SecureContext } from 'node:tls';
import type { Http1Options } from './http1.ts';

/** Loads a built-in module when first needed (a static import would load it at start-up, also for `--help`). */
const load = createRequire(import.meta.url);
const tls = (): typeof import('node:tls') => load('node:tls') as typeof import('node:tls');
const net = (): typeof import('node:net') => load('node:net') as typeof import('node:net');

/**
 * Connects to the Unix socket at `path`; resolves once connected, rejects with the errno error (ENOENT: no socket,
 * ECONNREFUSED: a stale socket nobody serves, EACCES: not this user's) or ETIMEDOUT after `timeoutMs`.
 */
export function connectUnix(path: string, timeoutMs: number): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    const socket = net().connect({ path });
    const onTimeout = (): void =>
      void socket.destroy(Object.assign(new Error(`no answer within ${timeoutMs / 1000}s`), { code: 'ETIMEDOUT' }));
    socket.setTimeout(timeoutMs, onTimeout);
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject).off('timeout', onTimeout).setTimeout(0);
      resolve(socket);
    });
  });
}

/**
 * The TLS context of the connections verified against `ca` (undefined: Node's roots), made once per CA and
 * shared by this client's connections and its streams' (http-transport.ts): `tls.connect({ ca })`, and node:https
 * given `ca`, would parse the CA and build a context at every connection (about 0.5 ms), and an agent that cannot
 * reach the control plane connects again and again (heartbeats, its watch, log batches). When 5,000 simulated
 * agents reconnected to a restarted control plane, making contexts took over a quarter of their CPU
 * (bench/herd-probe.ts with the agents' processes profiled).
 */
const contexts = new Map<string | undefined, SecureContext>();
export function secureContextFor(ca: string | undefined): SecureContext {
  let ctx = contexts.get(ca);
  if (!ctx) {
    ctx = tls().createSecureContext(ca ? { ca } : {});
    contexts.set(ca, ctx);
  }
  return ctx;
}

/**
 * Opens a TLS connection verified against the CA (or Node's roots) and resolves once the handshake is done. TCP
 * first (`tcpThenTls`): a refused connection costs no TLS socket. `session` is offered for resumption; `onSession` is
 * handed each new session the server issues, and undefined when the TLS handshake failed (the session is then forgotten,
 * as node:https's agent forgets it) — not when the TCP connection did: the control plane being down or restarting says
 * nothing against the session, and the agents resume it when the control plane is back (api/server/listen.ts
 * SESSION_TIMEOUT_S, first-start.ts ensureTicketKeys).
 */
export function connectTls(
  o: Http1Options,
  session: Buffer | undefined,
  onSession: (s: Buffer | undefined) => void,
): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    const ms = o.connectTimeoutMs ?? o.timeoutMs;
    let current: Socket | undefined;
    const onTimeout = (): void =>
      void current?.destroy(Object.assign(new Error(`no answer within ${ms / 1000}s`), { code: 'ETIMEDOUT' }));
    const tcp = tcpThenTls({ host: o.hostname, port: o.port }, () => {
      tcp.off('error', reject).off('timeout', onTimeout).setTimeout(0);
      const socket = tls().connect({
        socket: tcp,
        host: o.hostname,
        session,
        // As node:https does: SNI only for names, never for IP addresses.
        ...(net().isIP(o.hostname) ? {} : { servername: o.hostname }),
        secureContext: secureContextFor(o.ca),
      });
      const failed = (e: Error): void => {
        onSession(undefined);
        reject(e);
      };
      current = socket.setTimeout(ms, onTimeout).once('error', failed).on('session', onSession);
      socket.once('secureConnect', () => {
        socket.off('error', failed).off('timeout', onTimeout).setTimeout(0);
        resolve(socket);
      });
    });
    current = tcp.setTimeout(ms, onTimeout).once('error', reject);
  });
}

/**
 * Connects TCP to `to`, and only once that succeeded makes the TLS socket over it (`secure`). `tls.connect` makes its
 * TLS socket before it connects — the context's SSL object, the offered session parsed — and a refused connection
 * throws all of it away: 0.6–0.7 ms of CPU against 0.1–0.15 ms for a plain TCP attempt (3,000 refused attempts each
 * way in one process, 2026-12-04). An agent that cannot reach the control plane tries again and again (its heartbeats,
 * its watch's reconnects), and at 5,000 simulated agents those retries while the control plane restarted kept their
 * processes' main threads busy for seconds on end, on the cores the restarting control plane needed
 * (bench/herd-probe.ts, the agents' processes profiled). Returns the TCP socket, for the caller's error and timeout
 * listeners until `secure` runs.
 */
export function tcpThenTls(
  to: { host: string; port: number; keepAlive?: boolean; keepAliveInitialDelay?: number },
  secure: (tcp: Socket) => void,
): Socket {
  const tcp = net().connect(to);
  return tcp.once('connect', () => secure(tcp));
}

/**
 * node:https's keep-alive Agent (for streams: http-transport.ts) whose connections are made TCP first (`tcpThenTls`);
 * the TLS socket is then made by node:https's own `createConnection`, which resumes the agent's cached session.
 * `destroy()` also ends the connections still being made, failing their requests, as it ends node:https's own.
 */
export function tcpFirstHttpsAgent(opts: import('node:https').AgentOptions): import('node:https').Agent {
  const { Agent } = load('node:https') as typeof import('node:https');
  type Created = (err: Error | null, stream: import('node:stream').Duplex) => void;
  class TcpFirstAgent extends Agent {
    /** TCP connections not yet connected (not yet the agent's sockets). */
    readonly #connecting = new Set<Socket>();
    override createConnection(options: import('node:https').RequestOptions, created?: Created): undefined {
      const keepAlive = opts.keepAlive ? { keepAlive: true, keepAliveInitialDelay: opts.keepAliveMsecs ?? 1000 } : {};
      const to = { host: options.host ?? 'localhost', port: Number(options.port ?? 443), ...keepAlive };
      const tcp = tcpThenTls(to, () => {
        this.#connecting.delete(tcp);
        tcp.off('error', failed);
        const over: import('node:https').RequestOptions & { socket: Socket } = { ...options, socket: tcp };
        const socket = super.createConnection(over);
        if (socket) created?.(null, socket);
      });
      const failed = (err: Error): void => {
        this.#connecting.delete(tcp);
        created?.(err, tcp);
      };
      tcp.once('error', failed);
      this.#connecting.add(tcp);
      return undefined;
    }
    override destroy(): void {
      for (const tcp of this.#connecting)
        tcp.destroy(Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
      super.destroy();
    }
  }
  return new TcpFirstAgent(opts);
}
