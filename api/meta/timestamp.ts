/**
 * Timestamps as Kubernetes writes them in objects (`metav1.Time`): RFC 3339 in UTC with second precision,
 * `2030-01-01T00:00:00Z`. The one helper for every timestamp the store and the controllers put in an object
 * (creationTimestamp, deletionTimestamp, condition transition times, JoinToken usedAt).
 */

/** The RFC 3339 timestamp, second precision, of `ms` since the epoch (default: now). */
export function rfc3339(ms: number = Date.now()): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}
