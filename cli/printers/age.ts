/**
 * Formats ages exactly as kubectl does (apimachinery's `HumanDuration`): 5s, 3m10s, 2h, 4d, 2y10d.
 */
import { humanDuration } from '../../api/meta/human-duration.ts';

export { humanDuration };

/** The age of an RFC 3339 timestamp at `now`, or `<unknown>` when it is missing or unparsable. */
export function age(timestamp: unknown, now: number = Date.now()): string {
  if (typeof timestamp !== 'string' || !timestamp) return '<unknown>';
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return '<unknown>';
  return humanDuration(now - t);
}
