/**
 * Whether a node is reachable and whether it has applied its declaration: pure decisions from server-side
 * times, for the Node controller (node-controller.ts). Reachability is state, not class (ADR 0036): these
 * functions only describe a node; nothing here (or anywhere) moves or deletes an unreachable node's modules.
 *
 * Times are the control plane's: a heartbeat is *observed* when the agent's heartbeat changes the Node's
 * status (HeartbeatTracker), and the observation time — never the agent's clock — becomes `lastSeen`.
 */
import type { Condition } from '../api/meta/types.ts';
import { parseDuration } from '../api/meta/duration.ts';
import { humanDuration } from '../api/meta/human-duration.ts';
import type { Mesh } from '../api/v1alpha1/generated/index.ts';

/** The condition type that says whether the control plane hears from the node's agent. */
export const REACHABLE = 'Reachable';

/** The condition type that says whether the node has applied the newest generation of its Declaration. */
export const DECLARATION_APPLIED = 'DeclarationApplied';

/** The grace period when the Mesh sets none: four missed heartbeats at the default 10 s interval. */
export const DEFAULT_GRACE_MS = 40_000;

/** A condition's status, reason and message (without timestamps). */
export interface Verdict {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/** The Mesh's spec.reachabilityGracePeriod in ms; the default when unset, unparsable or not positive. */
export function gracePeriodMs(mesh: Mesh | undefined): number {
  const text = mesh?.spec?.reachabilityGracePeriod;
  if (text === undefined) return DEFAULT_GRACE_MS;
  try {
    return parseDuration(text);
  } catch {
    return DEFAULT_GRACE_MS;
  }
}

/** A duration for a message: `47s`, `3m10s` (kubectl style), or `500ms` below a second. */
export function formatDuration(ms: number): string {
  return ms > 0 && ms < 1000 ? `${Math.round(ms)}ms` : humanDuration(ms);
}

/** What reachabilityVerdict decides from. All times are the control plane's, in ms since the epoch. */
export interface ReachabilityInput {
  now: number;
  graceMs: number;
  /** The last heartbeat: observed by this process, else the stored status.lastSeen; undefined if never. */
  lastHeartbeat?: number;
  /**
   * When this process began watching the node. A control plane that has just started has not had the
   * chance to hear anyone, so for one grace period it keeps the node's previous condition.
   */
  watchingSince: number;
  /** The node's current Reachable condition. */
  previous?: Condition;
}

/** The Reachable verdict, and when time alone could change it (`recheckInMs`; undefined: only a heartbeat can). */
export interface ReachabilityDecision extends Verdict {
  recheckInMs?: number;
}

/**
 * When a node last heard at `lastHeartbeat` (ms) stops counting as reachable: a grace period after that heartbeat, or
 * after this process began watching the node (`watchingSince`) if that was later.
 */
export function reachableUntil(lastHeartbeat: number, watchingSince: number, graceMs: number): number {
  return Math.max(lastHeartbeat, watchingSince) + graceMs;
}

/**
 * Decides the Reachable condition: Unknown/NeverSeen before the first heartbeat; True/HeartbeatReceived
 * while the last heartbeat is younger than the grace period; False/HeartbeatMissed after it (keeping the
 * message written when it flipped, so the status is not rewritten while nothing happens).
 */
export function reachabilityVerdict(input: ReachabilityInput): ReachabilityDecision {
  const { now, graceMs, lastHeartbeat, watchingSince, previous } = input;
  const grace = formatDuration(graceMs);
  if (lastHeartbeat === undefined) {
    return { status: 'Unknown', reason: 'NeverSeen', message: "no heartbeat has been received from the node's agent" };
  }
  const silentMs = now - lastHeartbeat;
  if (silentMs < graceMs) {
    const deadline = reachableUntil(lastHeartbeat, watchingSince, graceMs);
    return {
      status: 'True',
      reason: 'HeartbeatReceived',
      message: `heartbeats arrive within the grace period (${grace})`,
      recheckInMs: deadline - now,
    };
  }
  const watchedMs = now - watchingSince;
  if (previous && watchedMs < graceMs) {
    return {
      status: previous.status as Verdict['status'],
      reason: previous.reason,
      message: previous.message,
      recheckInMs: graceMs - watchedMs,
    };
  }
  if (previous?.status === 'False' && previous.reason === 'HeartbeatMissed') {
    return { status: 'False', reason: previous.reason, message: previous.message };
  }
  return {
    status: 'False',
    reason: 'HeartbeatMissed',
    message: `no heartbeat for ${formatDuration(silentMs)} (grace period ${grace})`,
  };
}

/**
 * The generation the node applied in full, as the control plane knows it: the newer of what the agent's
 * heartbeat last wrote to the Node (`reported`) and what it wrote to its Declaration's status after applying
 * (`declarationStatus`, undefined when none). The agent reports an apply on the Declaration at once and on the
 * Node only at its next heartbeat, so the Declaration's is usually the first to know.
 */
export function appliedGeneration(reported?: number, declarationStatus?: number): number | undefined {
  if (declarationStatus === undefined) return reported;
  return reported === undefined ? declarationStatus : Math.max(reported, declarationStatus);
}

/** What declarationVerdict decides from. */
export interface DeclarationInput {
  /** spec.generation of the node's Declaration (undefined: it has none). */
  desired?: number;
  /** The generation the agent reports it last applied in full. */
  applied?: number;
  /** The Declaration's Applied condition (written by the agent), to tell a failed apply from one not yet done. */
  declarationApplied?: Condition;
  /** True when the agent reports that condition for the Declaration's current generation. */
  agentHoldsCurrent?: boolean;
  /** The node's Reachable status, to say why a generation is still pending. */
  reachable?: Verdict['status'];
}

/**
 * Decides the DeclarationApplied condition: True/Applied once the node applied the newest generation;
 * otherwise False with reason Pending (not there yet — e.g. the node is unreachable), NotApplied (the
 * agent has it and reports that it could not apply it) or Waiting (the agent has it and applied all it could; the
 * rest waits for material, e.g. a certificate not issued yet); Unknown/NoDeclaration before one is rendered.
 */
export function declarationVerdict(input: DeclarationInput): Verdict {
  const { desired, applied } = input;
  if (desired === undefined)
    return { status: 'Unknown', reason: 'NoDeclaration', message: 'the node has no Declaration yet' };
  if (applied !== undefined && applied >= desired) {
    return { status: 'True', reason: 'Applied', message: `the node applied declaration generation ${desired}` };
  }
  const last =
    applied === undefined
      ? 'the node has not applied any generation yet'
      : `the node last applied generation ${applied}`;
  const reported = input.agentHoldsCurrent && input.declarationApplied?.status === 'False';
  const reason = reported ? input.declarationApplied!.reason : undefined;
  if (reason === 'NotApplied' || reason === 'Waiting') {
    const verb = reason === 'Waiting' ? 'waits for material from the control plane' : 'did not apply';
    return {
      status: 'False',
      reason,
      message: `declaration generation ${desired} ${verb} (${last}): ${input.declarationApplied!.message}`,
    };
  }
  const why = input.reachable === 'False' ? '; the node is unreachable and applies it when it returns' : '';
  return { status: 'False', reason: 'Pending', message: `declaration generation ${desired} is pending: ${last}${why}` };
}

/**
 * When the control plane heard each node's agent, by its own clock. A heartbeat is a change of the Node's
 * status.controlPlaneLastContact — the agent sets it on every heartbeat and nothing else writes it — seen
 * after this process first saw the node (what is already there when it starts is not news).
 */
export class HeartbeatTracker {
  private readonly now: () => number;
  private readonly nodes = new Map<string, { token?: string; watchingSince: number; heardAt?: number }>();

  constructor(opts: { now: () => number }) {
    this.now = opts.now;
  }

  /** Records one informer event of a Node (ADDED, MODIFIED or DELETED). */
  observe(type: string, name: string, token: string | undefined): void {
    if (type === 'DELETED') {
      this.nodes.delete(name);
      return;
    }
    const entry = this.nodes.get(name);
    if (!entry) this.nodes.set(name, { token, watchingSince: this.now() });
    else if (entry.token !== token) Object.assign(entry, { token, heardAt: this.now() });
  }

  /** Records a heartbeat of `name` heard at `at` (ms) by other means than its Node's status (a lease). */
  heard(name: string, at: number): void {
    const entry = this.nodes.get(name);
    if (!entry) this.nodes.set(name, { watchingSince: this.now(), heardAt: at });
    else if (entry.heardAt === undefined || entry.heardAt < at) entry.heardAt = at;
  }

  /** When the last heartbeat of `name` was observed by this process (ms), if one was. */
  heardAt(name: string): number | undefined {
    return this.nodes.get(name)?.heardAt;
  }

  /** When this process first saw `name` (ms), if it has. */
  watchingSince(name: string): number | undefined {
    return this.nodes.get(name)?.watchingSince;
  }
}
