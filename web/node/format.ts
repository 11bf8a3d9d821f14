/**
 * The node page's words for its figures: durations kubectl-style (api/meta/human-duration.ts), times as
 * `<time>` elements, and each state as a word with a class (the colour only repeats what the word says).
 */
import { humanDuration } from '../../api/meta/human-duration.ts';
import { h } from '../shared/dom.ts';

/** `seconds` as kubectl prints an age: 5s, 3m10s, 2h. */
export function duration(seconds: number): string {
  return humanDuration(Math.max(0, seconds) * 1000);
}

/** An RFC 3339 time as a `<time>` in the reader's locale, with the exact value in its `datetime`. */
export function time(iso: string): HTMLTimeElement {
  const d = new Date(iso);
  return h('time', { datetime: iso, title: iso }, Number.isNaN(d.getTime()) ? iso : d.toLocaleString());
}

/** A state word in a span whose class colours it: ok, warn, bad or none. */
export function stateWord(word: string, tone: 'ok' | 'warn' | 'bad' | 'none'): HTMLSpanElement {
  return h('span', { class: `state ${tone}` }, word);
}

/** A declared resource's state in words. */
export function resourceState(state: string): HTMLSpanElement {
  switch (state) {
    case 'Applied':
      return stateWord('Applied', 'ok');
    case 'Pending':
      return stateWord('Pending (not reconciled yet)', 'warn');
    case 'Waiting':
      return stateWord('Waiting for its certificate (not issued yet)', 'warn');
    case 'DependencyFailed':
      return stateWord('Not applied: a dependency failed', 'bad');
    case 'Conflict':
      return stateWord('Conflict: not owned by this agent', 'bad');
    default:
      return stateWord(state, 'bad'); // Failed
  }
}

/** A supervised process's phase in words. */
export function servicePhase(driver: string, phase: string | undefined): HTMLSpanElement {
  if (driver === 'systemd') return stateWord('Run by systemd (not tracked on this page)', 'none');
  switch (phase) {
    case 'running':
      return stateWord('Running', 'ok');
    case 'backoff':
      return stateWord('Exited, waiting to restart', 'bad');
    case 'exited':
      return stateWord('Exited (not restarted: its restart policy)', 'warn');
    case 'stopping':
      return stateWord('Stopping', 'warn');
    default:
      return stateWord('Not started', 'warn');
  }
}
