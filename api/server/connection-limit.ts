/**
 * The bound on the server's open connections, below the process's open-file limit. Without it, a control plane
 * whose connections use up its file descriptors fails silently: libuv accepts each new connection and closes it
 * at once when accept() returns EMFILE (Node emits no error), so agents see resets and nothing is logged; and the
 * store, which needs descriptors of its own, fails next. With it, Node closes the connections over the bound
 * itself (the server's `drop` event), the store keeps its descriptors, and the refusal is logged saying what to
 * raise. The control plane runs as a service of the mesh-agent and inherits its limit (LimitNOFILE=65536 in
 * manifests/systemd/mesh-agent.service); Node raises its soft limit to the hard one at start-up.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from '../meta/logger.ts';

/** Descriptors kept for everything but connections: a tenth of the limit, at least this many. */
export const RESERVED_FILES = 256;
/** At most one log line per this many ms while connections are being refused. */
export const REFUSED_LOG_INTERVAL_MS = 10_000;

/** The soft open-file limit of this process, read from /proc/self/limits; undefined where there is none (not Linux). */
export function openFileLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(text);
  return m && m[1] !== 'unlimited' ? Number(m[1]) : undefined;
}

/** How many connections the server may hold open given the open-file limit; undefined when the limit is unknown. */
export function connectionLimit(limit: number | undefined): number | undefined {
  if (limit === undefined) return undefined;
  return Math.max(1, limit - Math.max(RESERVED_FILES, Math.ceil(limit / 10)));
}

/**
 * The server's `drop` listener: logs the first refused connection at once and then at most one line per
 * REFUSED_LOG_INTERVAL_MS with how many were refused since the previous line.
 */
export function logRefusedConnections(
  logger: Logger | undefined,
  maxConnections: number,
  now: () => number = Date.now,
): () => void {
  let refused = 0;
  let lastLog = -Infinity;
  return () => {
    refused++;
    if (!logger || now() - lastLog < REFUSED_LOG_INTERVAL_MS) return;
    lastLog = now();
    logger.error('Refused connections over the open-connection limit', {
      refused,
      maxConnections,
      openFileLimit: openFileLimit(),
      hint: 'raise LimitNOFILE of the mesh-agent that runs the control plane (or ulimit -n where it runs)',
    });
    refused = 0;
  };
}
