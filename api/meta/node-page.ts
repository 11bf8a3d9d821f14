/**
 * The JSON an agent serves at `GET /status.json` on its metrics port, read by its node page (web/node/). It
 * is computed by the agent from its own store and files alone (agent/node-page.ts), so it answers while the
 * control plane is down. It never carries a secret: no file contents, no environment values, no tokens, no
 * keys — resources are named by id, kind and owner only.
 *
 * Every time-dependent figure is as of `generatedAt`; the page adds the time elapsed since it fetched the
 * view (`tickedSeconds`) so the figures keep moving between fetches.
 */

/** A declared resource's state: the Declaration status's states (`Pending` before the first reconcile of it). */
export type NodeResourceState = 'Applied' | 'Failed' | 'DependencyFailed' | 'Conflict' | 'Waiting' | 'Pending';

/** The node page's view of one agent (see the module comment). */
export interface NodePageStatus {
  node: string;
  agentVersion: string;
  /** When the agent computed this view (RFC 3339). */
  generatedAt: string;
  controlPlane: {
    /** Absent before the agent's first call to the control plane. */
    reachable?: boolean;
    lastContact?: string;
    unreachableSince?: string;
    /** Seconds since contact was lost, as of generatedAt (0 while reachable). */
    unreachableSeconds: number;
  };
  /** The certificates whose material the node holds, earliest notAfter first. */
  certificates: Array<{ name: string; notAfter: string; remainingSeconds: number; expired: boolean }>;
  /** The node's recovery deadline: the earliest notAfter of its certificates. */
  deadline?: { notAfter: string; budgetSeconds: number; setBy: string };
  /** The Declaration in the agent's store; absent before the first one arrived. */
  declaration?: {
    /** spec.generation of the stored Declaration (what the control plane wants applied). */
    desiredGeneration: number;
    /** spec.generation last applied with every resource Applied. */
    appliedGeneration?: number;
    receivedAt: string;
  };
  /** The declared resources in declaration order. */
  resources: Array<{ id: string; kind: string; owner: string; state: NodeResourceState; message?: string }>;
  /** The declared Services: for `process` ones, what the agent's supervisor knows of the process. */
  services: NodeServiceView[];
  /** The agent's last reconcile. */
  lastReconcile?: { at: string; outcome: 'success' | 'failure' | 'waiting' | 'error' };
}

/** One declared Service on the node page. */
export interface NodeServiceView {
  id: string;
  driver: 'process' | 'systemd';
  /** process only: running, backoff (waiting to restart), exited, stopping; absent when not started (yet). */
  phase?: string;
  pid?: number;
  restarts?: number;
  lastExit?: { code: number | null; signal: string | null; at: string };
}

/** A figure of the view `elapsedMs` after it was fetched: seconds since (`sign` 1) or until (`sign` -1). */
export function tickedSeconds(seconds: number, elapsedMs: number, sign: 1 | -1): number {
  return seconds + (sign * Math.max(0, elapsedMs)) / 1000;
}
