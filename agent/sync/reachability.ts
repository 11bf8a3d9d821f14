/**
 * Whether the agent can reach the control plane, and since when it cannot: the measure ADR 0053 says
 * nothing reported yet. Every API call reports its outcome here; only a failure to reach the server
 * (connection refused, reset, timed out, TLS) counts — an answer, even an error, means it is reachable.
 * `unreachableSince` is persisted in the agent's store on each transition, so the number survives an
 * agent restart during an outage. One log line when contact is lost, one when it returns.
 */
import { isUnreachable } from '../../api/client/http-client.ts';
import type { Logger } from '../engine/types.ts';
import type { AgentStore } from '../store/agent-store.ts';

/** The agent's view of the control plane's reachability. */
export interface Reachability {
  /**
   * Records a call that reached the control plane. `'watch'`: the Declaration watch's list or events, which are no
   * request of this agent the control plane hears as a heartbeat; every other answered request is (lastAnswered).
   */
  succeeded(via?: 'watch'): void;
  /** Records a failed call; true when it failed because the control plane could not be reached. */
  failed(e: unknown): boolean;
  /** True/false once known; undefined before the first call. */
  reachable(): boolean | undefined;
  unreachableSince(): string | undefined;
  lastContact(): string | undefined;
  /**
   * When a request of this agent other than the watch was last answered (ms, this tracker's clock): the control
   * plane counts each as a heartbeat (api/server/access/node-leases.ts `contact`). Undefined before the first.
   */
  lastAnswered(): number | undefined;
  /** Seconds since contact was lost; 0 while reachable (or before the first call). */
  unreachableSeconds(): number;
  /** Adds a listener called when contact returns, with how long it was lost. */
  onReturn(fn: (lostSeconds: number, since: string) => void): void;
  /** Stops recording (the agent is shutting down: its own closed connections are no outage). */
  close(): void;
}

/** Options of `createReachability`. */
export interface ReachabilityOptions {
  store: AgentStore;
  logger: Logger;
  node: string;
  server: string;
  now?: () => number;
}

/** Creates the reachability tracker, starting from what the store remembers. */
export function createReachability(opts: ReachabilityOptions): Reachability {
  const now = opts.now ?? Date.now;
  const saved = opts.store.connection();
  let since = saved.unreachableSince;
  let lastContact = saved.lastContact;
  let state: boolean | undefined = since === undefined ? undefined : false;
  const listeners: Array<(lostSeconds: number, since: string) => void> = [];
  let closed = false;
  let answered: number | undefined;
  const persist = (): void => {
    opts.store
      .updateConnection({ unreachableSince: since, lastContact })
      .catch((e: unknown) =>
        opts.logger.error('Failed to store connection state', { node: opts.node, error: String(e) }),
      );
  };
  const seconds = (): number => (since === undefined ? 0 : Math.max(0, (now() - Date.parse(since)) / 1000));

  return {
    succeeded(via) {
      if (closed) return;
      const at = now();
      if (via !== 'watch') answered = at;
      lastContact = new Date(at).toISOString();
      if (state === true) return;
      const wasSince = since;
      const lost = seconds();
      state = true;
      since = undefined;
      persist();
      if (wasSince === undefined) {
        opts.logger.info('Connected to control plane', { node: opts.node, server: opts.server });
        return;
      }
      opts.logger.info('Reconnected to control plane', {
        node: opts.node,
        server: opts.server,
        unreachableSeconds: Math.round(lost),
      });
      for (const fn of listeners) fn(lost, wasSince);
    },
    failed(e) {
      if (!isUnreachable(e)) return false;
      if (closed) return true;
      if (state === false) return true;
      state = false;
      since = new Date(now()).toISOString();
      persist();
      opts.logger.error('Lost contact with control plane', {
        node: opts.node,
        server: opts.server,
        error: (e as Error).message,
        lastContact,
      });
      return true;
    },
    reachable: () => state,
    unreachableSince: () => since,
    lastContact: () => lastContact,
    lastAnswered: () => answered,
    unreachableSeconds: () => (state === false ? seconds() : 0),
    onReturn(fn) {
      listeners.push(fn);
    },
    close() {
      closed = true;
    },
  };
}
