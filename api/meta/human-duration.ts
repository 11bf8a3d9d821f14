/**
 * Formats durations exactly as kubectl prints ages (apimachinery's `HumanDuration`): 5s, 3m10s, 2h, 4d, 2y10d.
 * Shared by the server's Tables and meshctl's printers.
 */

/** A duration in milliseconds, kubectl-style; negative beyond -1s is `<invalid>`. */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(seconds / 60);
  if (minutes < 10) return withRest(minutes, 'm', seconds % 60, 's');
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(minutes / 60);
  if (hours < 8) return withRest(hours, 'h', minutes % 60, 'm');
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) return withRest(days, 'd', hours % 24, 'h');
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) return withRest(years, 'y', days % 365, 'd');
  return `${years}y`;
}

function withRest(big: number, bigUnit: string, rest: number, restUnit: string): string {
  return rest === 0 ? `${big}${bigUnit}` : `${big}${bigUnit}${rest}${restUnit}`;
}
