/**
 * How the page words times: a clock time (`14:02:07`, local), an age (`42s ago`, kubectl's units through
 * api/meta/human-duration.ts) and a countdown to the second (`29d 23h 59m 12s`).
 */
import { humanDuration } from '../../api/meta/human-duration.ts';

const two = (n: number): string => String(n).padStart(2, '0');

/** The local clock time of `ms`, HH:MM:SS. */
export function clockTime(ms: number): string {
  const d = new Date(ms);
  return `${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())}`;
}

/** The local date and time of an ISO time, `2026-12-01 14:02:07`. */
export function dateTime(iso: string): string {
  const d = new Date(iso);
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${clockTime(d.getTime())}`;
}

/** How long ago `iso` was, from `now`: `42s ago`, or `never`. */
export function ago(now: number, iso: string | undefined): string {
  return iso ? `${humanDuration(now - Date.parse(iso))} ago` : 'never';
}

/** A countdown to the second: `3d 4h 5m 6s`, `5m 6s`; `passed 2m 3s ago` once it is over. */
export function countdown(ms: number): string {
  const passed = ms < 0;
  let s = Math.floor(Math.abs(ms) / 1000);
  const parts: string[] = [];
  for (const [unit, size] of [
    ['d', 86_400],
    ['h', 3600],
    ['m', 60],
  ] as const) {
    const n = Math.floor(s / size);
    s -= n * size;
    if (n > 0 || parts.length) parts.push(`${n}${unit}`);
  }
  parts.push(`${s}s`);
  return passed ? `passed ${parts.join(' ')} ago` : parts.join(' ');
}
