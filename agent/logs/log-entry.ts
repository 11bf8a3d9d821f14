/**
 * What the agent's log shipper moves around: one line of a service's log, with the service's resource id
 * and when the agent read it; in the buffer each also carries a sequence number, increasing without
 * gaps per buffer, so that the control plane can drop a batch it already stored (a retry after a reply
 * that was lost).
 */

/** One line of a service's log, as read. */
export interface LogEntry {
  /** The Service resource's id in the Declaration (e.g. `web-on-a/server`). */
  service: string;
  /** When the agent read the line (RFC 3339). */
  time: string;
  /** The text, without its newline. */
  line: string;
}

/** A line in the buffer. */
export interface BufferedEntry extends LogEntry {
  seq: number;
}

/** Lines and bytes (of text, newline included) lost from one service's log. */
export interface DropCount {
  lines: number;
  bytes: number;
}
