/**
 * The page's live copy of the API: for each kind it shows, one list and then a `?watch=1` stream read through
 * fetch (no polling). Any stream failing ends the whole connection; it is then re-established — lists first,
 * then watches — after a backoff (api/meta/clock.ts), and the state says honestly what is going on: connecting,
 * connected, lost since when and retrying when, or signed out (the session cookie was refused).
 */
import { Backoff } from '../../api/meta/clock.ts';
import type { KubeObject } from '../../api/meta/types.ts';

/** The kinds the page shows, by plural. */
export const PLURALS = ['meshes', 'nodes', 'assignments', 'certificates', 'events'] as const;
/** One of PLURALS. */
export type Plural = (typeof PLURALS)[number];

/** The connection's state, with the times (ms since the epoch) the page words. */
export type Connection =
  | { state: 'connecting' }
  | { state: 'connected'; since: number; reconnectedAfter?: number }
  | { state: 'lost'; since: number; retryAt: number; attempt: number; error: string }
  | { state: 'signed-out' };

const API = '/apis/meshctl.dev/v1alpha1/';

/** Thrown when the API refuses the session (401): the page asks to sign in. */
class SignedOut extends Error {}
/** Thrown when a watch is too old to resume (410): list again at once; the connection is fine. */
class Resync extends Error {}

/** The live data and connection; `onChange` is called after every change of either. */
export class Live {
  readonly data = new Map<Plural, Map<string, KubeObject>>(PLURALS.map((p) => [p, new Map()]));
  conn: Connection = { state: 'connecting' };
  private stopped = true;
  private abort?: AbortController;
  private wake?: () => void;
  private readonly backoff = new Backoff({ baseMs: 500, maxMs: 8000, jitter: 0.2 });

  constructor(private readonly onChange: () => void) {}

  /** The objects of `plural` as last seen. */
  items<T extends KubeObject>(plural: Plural): T[] {
    return [...this.data.get(plural)!.values()] as T[];
  }

  /** Starts (or restarts) connecting. */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.set({ state: 'connecting' });
    void this.loop();
  }

  /** Stops and forgets the data (sign-out). */
  stop(): void {
    this.stopped = true;
    this.abort?.abort();
    this.wake?.();
    for (const m of this.data.values()) m.clear();
  }

  private set(conn: Connection): void {
    this.conn = conn;
    this.onChange();
  }

  private async loop(): Promise<void> {
    let lostSince: number | undefined;
    while (!this.stopped) {
      const ctl = new AbortController();
      this.abort = ctl;
      try {
        const versions = await Promise.all(PLURALS.map((p) => this.list(p, ctl.signal)));
        this.backoff.reset();
        const reconnected = lostSince !== undefined ? { reconnectedAfter: lostSince } : {};
        this.set({ state: 'connected', since: Date.now(), ...reconnected });
        lostSince = undefined;
        await Promise.race(PLURALS.map((p, i) => this.watch(p, versions[i], ctl.signal)));
      } catch (e) {
        if (this.stopped) return;
        if (e instanceof SignedOut) return this.signedOut();
        if (e instanceof Resync) continue;
        lostSince ??= Date.now();
        await this.retryAfter(lostSince, e);
      } finally {
        ctl.abort();
      }
    }
  }

  private signedOut(): void {
    this.stopped = true;
    for (const m of this.data.values()) m.clear();
    this.set({ state: 'signed-out' });
  }

  private async retryAfter(since: number, e: unknown): Promise<void> {
    const delay = this.backoff.next();
    const error = e instanceof Error ? e.message : String(e);
    this.set({ state: 'lost', since, retryAt: Date.now() + delay, attempt: this.backoff.failures(), error });
    await new Promise<void>((resolve) => {
      this.wake = resolve;
      setTimeout(resolve, delay);
    });
  }

  /** Lists `plural` into the data; resolves with the list's resourceVersion. */
  private async list(plural: Plural, signal: AbortSignal): Promise<string> {
    const res = await get(`${API}${plural}`, signal);
    const list = (await res.json()) as { metadata?: { resourceVersion?: string }; items?: KubeObject[] };
    const m = this.data.get(plural)!;
    m.clear();
    for (const o of list.items ?? []) m.set(o.metadata.name ?? '', o);
    return list.metadata?.resourceVersion ?? '0';
  }

  /** Applies `plural`'s watch events from `rv` until the stream ends (resolves) or fails (rejects). */
  private async watch(plural: Plural, rv: string, signal: AbortSignal): Promise<void> {
    const q = new URLSearchParams({ watch: '1', resourceVersion: rv, allowWatchBookmarks: 'true' });
    const res = await get(`${API}${plural}?${q}`, signal);
    if (!res.body) throw new Error('the watch has no body');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffered = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the ${plural} watch ended`);
      buffered += value;
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) this.apply(plural, JSON.parse(line) as WatchEvent);
    }
  }

  private apply(plural: Plural, ev: WatchEvent): void {
    if (ev.type === 'BOOKMARK') return;
    if (ev.type === 'ERROR' && ev.object.code === 410) throw new Resync('the watch is too old');
    if (ev.type === 'ERROR') throw new Error(`the ${plural} watch failed: ${ev.object.message ?? 'error'}`);
    const m = this.data.get(plural)!;
    const name = ev.object.metadata?.name ?? '';
    if (ev.type === 'DELETED') m.delete(name);
    else m.set(name, ev.object);
    this.onChange();
  }
}

/** One event of a watch stream. */
type WatchEvent =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: KubeObject }
  | { type: 'ERROR'; object: { message?: string; code?: number; metadata?: undefined } };

/** A GET with the session cookie; a 401 is SignedOut, any other failure an Error with the server's message. */
async function get(url: string, signal: AbortSignal): Promise<Response> {
  const res = await fetch(url, { signal, credentials: 'same-origin', headers: { accept: 'application/json' } });
  if (res.status === 401) throw new SignedOut('the session was refused');
  if (!res.ok) {
    const status = (await res.json().catch(() => ({}))) as { message?: string };
    throw new Error(status.message ?? `HTTP ${res.status}`);
  }
  return res;
}
