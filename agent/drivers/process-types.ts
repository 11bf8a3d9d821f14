/**
 * The contract of the process supervisor: what it runs (`ProcessSpec`), how it backs off, its options,
 * and the status it reports. Kept apart from the implementation so the driver façade and the agent
 * depend on the shape only.
 */
import type { Clock } from '../../api/meta/clock.ts';
import type { RestartPolicy } from '../../api/v1alpha1/generated/host-resource.ts';
import type { Logger } from '../engine/types.ts';

/** What the supervisor runs for a service: argv, extra environment, working directory, policy. */
export interface ProcessSpec {
  command: string[];
  env: Record<string, string>;
  cwd: string;
  /** The agent's root: `cwd` must resolve inside it each time the process is started. */
  root?: string;
  restart: RestartPolicy;
  /** Identifies the declared spec; a different fingerprint means "restart with the new spec". */
  fingerprint: string;
}

/** Restart backoff: first delay, cap, and the uptime after which the delay resets to the first. */
export interface BackoffTimings {
  initialMs: number;
  maxMs: number;
  resetAfterMs: number;
}

/** The production backoff: 1 s doubling to 60 s, reset once a process stayed up 10 s. */
export const DEFAULT_BACKOFF: BackoffTimings = { initialMs: 1000, maxMs: 60_000, resetAfterMs: 10_000 };

/** Options of `createProcessSupervisor`. */
export interface ProcessSupervisorOptions {
  /** The agent's own directory: `services/<id>.json` pid files and `logs/<id>.log`. */
  stateDir: string;
  logger: Logger;
  backoff?: Partial<BackoffTimings>;
  /** Time between SIGTERM and SIGKILL. Default 10 s. */
  stopGraceMs?: number;
  /** Log size that triggers rotation. Default 10 MiB. */
  logMaxBytes?: number;
  /** How often adopted processes are checked for life and logs for size. Default 1 s. */
  pollMs?: number;
  /** Environment every service starts with, under its own `env`. Default: PATH only. */
  baseEnv?: Record<string, string>;
  clock?: Clock;
}

/** Where a supervised service is: running, waiting to restart, or exited for good (restart policy). */
export type ProcessPhase = 'running' | 'backoff' | 'exited' | 'stopping';

/** A service's process as the supervisor knows it. */
export interface ProcessStatus {
  id: string;
  phase: ProcessPhase;
  pid?: number;
  fingerprint: string;
  /** Started by an earlier agent process and adopted by this one. */
  adopted: boolean;
  restarts: number;
  lastExit?: { code: number | null; signal: string | null; at: string };
}

/** The supervisor's API; `close()` stops supervising but leaves processes running (agent shutdown). */
export interface ProcessSupervisor {
  /** Starts the service unless it runs with this spec already; restarts it when the spec changed. */
  ensure(id: string, spec: ProcessSpec): Promise<ProcessStatus>;
  /** The service's status, adopting a process a previous agent recorded; undefined if none. */
  inspect(id: string): Promise<ProcessStatus | undefined>;
  /** Stops the service (SIGTERM, SIGKILL after the grace period) and forgets it. */
  stop(id: string): Promise<void>;
  stopAll(): Promise<void>;
  close(): void;
}
