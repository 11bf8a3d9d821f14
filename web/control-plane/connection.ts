/**
 * The page's connection state in words: `status` (announced to screen readers when it changes, so it has no
 * ticking numbers) and `detail` (the retry countdown, shown but not announced).
 */
import { clockTime } from './format.ts';
import type { Connection } from './live.ts';

/** What the connection line says now. */
export function connectionText(c: Connection, now: number): { status: string; detail: string } {
  switch (c.state) {
    case 'connecting':
      return { status: 'Connecting to the control plane…', detail: '' };
    case 'connected':
      return c.reconnectedAfter !== undefined
        ? {
            status: `Reconnected at ${clockTime(c.since)} (the connection was lost at ${clockTime(c.reconnectedAfter)}); live.`,
            detail: '',
          }
        : { status: `Connected since ${clockTime(c.since)}; live.`, detail: '' };
    case 'lost': {
      const wait = Math.max(0, Math.ceil((c.retryAt - now) / 1000));
      return {
        status: `Connection to the control plane lost since ${clockTime(c.since)}; retrying (attempt ${c.attempt}).`,
        detail: wait > 0 ? `Next try in ${wait}s. Last error: ${c.error}` : `Trying now. Last error: ${c.error}`,
      };
    }
    case 'signed-out':
      return { status: 'Signed out: sign in to see the mesh.', detail: '' };
  }
}
