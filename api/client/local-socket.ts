/**
 * Connecting to the control plane's local Unix domain socket (the admin meshconfig's `meshctl.dev/local-socket`
 * extension): on the control plane's own machine the API is also served there, without TLS (the kernel protects
 * local IPC, and the socket is 0600 in a 0700 directory of the control plane's user), so a one-shot command never
 * loads `node:tls` nor makes a handshake. The bearer token is sent and checked as over HTTPS.
 */
import { createRequire } from 'node:module';
import type { Socket } from 'node:net';

/** Loaded when first needed, as http1.ts does (a static import would load it for `--help` too). */
const load = createRequire(import.meta.url);

/**
 * Connects to the Unix socket at `path`; resolves once connected, rejects with the errno error (ENOENT: no socket,
 * ECONNREFUSED: a stale socket nobody serves, EACCES: not this user's) or ETIMEDOUT after `timeoutMs`.
 */
export function connectUnix(path: string, timeoutMs: number): Promise<Socket> {
  return new Promise<Socket>((resolve, reject) => {
    const socket = (load('node:net') as typeof import('node:net')).connect({ path });
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
