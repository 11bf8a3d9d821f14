/**
 * The wire shapes of service logs (`/apis/meshctl.dev/v1alpha1/nodes/<node>/logs`) and the checks of what
 * a node posts. An agent POSTs `{stream, entries: [{seq, service, time, line}], dropped?}`; `seq` numbers
 * its lines within `stream` (its on-disk buffer), so that a batch sent again after a lost reply is stored
 * once. `GET` without `service` answers a `ServiceLogList`.
 */
import { ApiError } from '../meta/api-error.ts';
import { API_VERSION, GROUP, VERSION } from '../meta/types.ts';

/** One line of a service's log. */
export interface LogLine {
  /** Position in the sender's stream (increasing); lines at or below the last one stored are duplicates. */
  seq?: number;
  /** The Service resource id in the node's Declaration, e.g. `web-on-a/server`. */
  service: string;
  /** When the agent read the line (RFC 3339). */
  time: string;
  /** The text, without a newline. */
  line: string;
}

/** Lines a node lost for one service (its buffer was full while the control plane was unreachable). */
export interface DroppedLines {
  service: string;
  lines: number;
  bytes: number;
}

/** The body of `POST …/nodes/<node>/logs`. */
export interface LogPost {
  /** Identifies the sender's numbering (a new buffer starts a new stream). */
  stream?: string;
  entries: LogLine[];
  dropped?: DroppedLines[];
}

/** The answer to a POST: lines stored and lines skipped as already stored. */
export interface LogPostResult {
  accepted: number;
  duplicates: number;
}

/** One service with stored logs. */
export interface ServiceLogInfo {
  service: string;
  bytes: number;
  lastWriteTime: string;
}

/** `GET …/nodes/<node>/logs` without `service`. */
export interface ServiceLogList {
  apiVersion: string;
  kind: 'ServiceLogList';
  node: string;
  items: ServiceLogInfo[];
}

/** The most lines one POST may carry. */
const MAX_ENTRIES = 100_000;
/** The longest line kept (longer ones are refused: the agent cuts lines at 16 KiB). */
const MAX_LINE = 64 * 1024;

/** The path of a node's logs. */
export function logsPath(node: string): string {
  return `/apis/${GROUP}/${VERSION}/nodes/${encodeURIComponent(node)}/logs`;
}

/** Builds a ServiceLogList. */
export function serviceLogList(node: string, items: ServiceLogInfo[]): ServiceLogList {
  return { apiVersion: API_VERSION, kind: 'ServiceLogList', node, items };
}

/** Why `s` is not a usable service id, or undefined. */
export function serviceProblem(s: unknown): string | undefined {
  if (typeof s !== 'string' || s.length === 0) return 'must be a non-empty string';
  if (s.length > 253) return 'must be at most 253 characters';
  if (/[\u0000-\u001f\u007f]/.test(s)) return 'must not contain control characters';
  return undefined;
}

function bad(field: string, message: string): ApiError {
  return ApiError.badRequest(`${field}: ${message}`);
}

/** Checks a parsed POST body; 400 naming the first bad field. */
export function parseLogPost(body: Record<string, unknown>): LogPost {
  const { stream, entries, dropped } = body;
  if (stream !== undefined && (typeof stream !== 'string' || !/^[A-Za-z0-9-]{1,64}$/.test(stream)))
    throw bad('stream', 'must be 1-64 letters, digits or dashes');
  if (!Array.isArray(entries)) throw bad('entries', 'must be a list');
  if (entries.length > MAX_ENTRIES) throw bad('entries', `must hold at most ${MAX_ENTRIES} lines`);
  let lastSeq = 0;
  const out: LogLine[] = entries.map((raw: unknown, i) => {
    const e = (raw ?? {}) as Record<string, unknown>;
    const at = `entries[${i}]`;
    const sp = serviceProblem(e.service);
    if (sp) throw bad(`${at}.service`, sp);
    if (typeof e.time !== 'string' || e.time.length > 64 || Number.isNaN(Date.parse(e.time)) || /\s/.test(e.time))
      throw bad(`${at}.time`, 'must be an RFC 3339 time');
    if (typeof e.line !== 'string' || e.line.length > MAX_LINE)
      throw bad(`${at}.line`, `must be a string of at most ${MAX_LINE} characters`);
    if (/[\n\r]/.test(e.line)) throw bad(`${at}.line`, 'must not contain a newline');
    if (e.seq !== undefined && (!Number.isSafeInteger(e.seq) || (e.seq as number) <= lastSeq))
      throw bad(`${at}.seq`, 'must be a positive integer, increasing within the body');
    if (typeof e.seq === 'number') lastSeq = e.seq;
    return {
      ...(typeof e.seq === 'number' ? { seq: e.seq } : {}),
      service: e.service as string,
      time: e.time,
      line: e.line,
    };
  });
  return {
    ...(typeof stream === 'string' ? { stream } : {}),
    entries: out,
    ...(dropped !== undefined ? { dropped: parseDropped(dropped) } : {}),
  };
}

function parseDropped(v: unknown): DroppedLines[] {
  if (!Array.isArray(v) || v.length > 10_000) throw bad('dropped', 'must be a list of {service, lines, bytes}');
  return v.map((raw: unknown, i) => {
    const d = (raw ?? {}) as Record<string, unknown>;
    const sp = serviceProblem(d.service);
    if (sp) throw bad(`dropped[${i}].service`, sp);
    if (
      !Number.isSafeInteger(d.lines) ||
      (d.lines as number) < 0 ||
      !Number.isSafeInteger(d.bytes) ||
      (d.bytes as number) < 0
    ) {
      throw bad(`dropped[${i}]`, 'lines and bytes must be non-negative integers');
    }
    return { service: d.service as string, lines: d.lines as number, bytes: d.bytes as number };
  });
}
