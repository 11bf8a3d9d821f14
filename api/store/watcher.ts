/**
 * One registered watch: its selectors, where it is in the event stream (`cursor`, a resourceVersion), and
 * how a change looks through its selectors. Like the apiserver, a MODIFIED object that stops matching is
 * delivered as DELETED (with its previous content) and one that starts matching as ADDED.
 */
import type { KubeObject } from '../meta/types.ts';
import {
  matchesFields,
  matchesLabels,
  requiredName,
  type FieldSelector,
  type LabelSelector,
} from '../meta/selectors.ts';
import type { StoreEvent } from './store-event.ts';
import type { Watch } from './types.ts';

/** Options of the Watcher constructor. */
export interface WatcherOptions {
  plural: string;
  label: LabelSelector;
  field: FieldSelector;
  /** The resourceVersion already seen: only events after it are delivered. */
  cursor: number;
  /** Leaves out status-only MODIFIED events (WatchOptions.omitStatusUpdates). */
  omitStatusUpdates?: boolean;
  /** Objects to deliver as ADDED first (a watch from resourceVersion 0), listed at `cursor`. */
  initial?: KubeObject[];
  onEvent: (e: StoreEvent) => void;
  /** Its owner (the watch hub, one for all its watchers): what `stop`, `pause` and `resume` ask of it. */
  control: WatcherControl;
}

/**
 * What a watcher's owner does for it: stop it, pause and resume delivery, and stop it when its callback throws.
 * One object per owner, shared by all its watchers, so a watch costs no closures of its own.
 */
export interface WatcherControl {
  stop(w: Watcher): void;
  pause(w: Watcher): void;
  resume(w: Watcher): void;
  /** Called when `onEvent` throws; the owner stops the watcher. */
  failed(w: Watcher, err: unknown): void;
}

/** A watch's state (see the file comment), and the `Watch` its caller holds. */
export class Watcher implements Watch {
  readonly plural: string;
  /** The only object name this watch can see (its field selector requires it), if any. */
  readonly name: string | undefined;
  readonly #label: LabelSelector;
  readonly #field: FieldSelector;
  readonly #filtered: boolean;
  readonly #omitStatusUpdates: boolean;
  readonly #onEvent: (e: StoreEvent) => void;
  readonly #control: WatcherControl;
  cursor: number;
  initial?: KubeObject[];
  /** Caught up with the log: live events are delivered directly. */
  ready = false;
  stopped = false;
  /** Paused by its consumer (flow control): it catches up from the log when resumed. */
  paused = false;

  constructor(opts: WatcherOptions) {
    this.plural = opts.plural;
    this.name = requiredName(opts.field);
    this.#label = opts.label;
    this.#field = opts.field;
    this.#filtered = opts.label.length > 0 || opts.field.length > 0;
    this.#omitStatusUpdates = opts.omitStatusUpdates === true;
    this.cursor = opts.cursor;
    this.initial = opts.initial;
    this.#onEvent = opts.onEvent;
    this.#control = opts.control;
  }

  /** Ends the watch (idempotent). */
  stop(): void {
    this.#control.stop(this);
  }

  /** Holds delivery until `resume()` (flow control, see Watch). */
  pause(): void {
    this.#control.pause(this);
  }

  /** Delivers again, from the log first. */
  resume(): void {
    this.#control.resume(this);
  }

  #matches(obj: KubeObject): boolean {
    return matchesLabels(obj, this.#label) && matchesFields(obj, this.#field);
  }

  #select(e: StoreEvent): StoreEvent | undefined {
    if (!this.#filtered) return e;
    // Another object than the one this watch can see: not even read (an event in the log may have to be decoded).
    if (this.name !== undefined && e.name !== this.name) return undefined;
    const now = this.#matches(e.object);
    if (e.type !== 'MODIFIED') return now ? e : undefined;
    const before = e.prev !== undefined && this.#matches(e.prev);
    if (now) return before ? e : e.asAdded();
    return before ? e.asDeleted() : undefined;
  }

  /** Delivers a change if it is after the cursor and visible through the selectors. */
  deliver(e: StoreEvent): void {
    if (this.stopped || e.rv <= this.cursor) return;
    this.cursor = e.rv;
    const seen = this.#select(e);
    // Only the change as it is: one that a selector shows as ADDED or DELETED is delivered as such.
    if (seen === e && this.#omitStatusUpdates && e.statusOnly) return;
    if (seen) this.emit(seen);
  }

  /** Calls the callback (no filtering); a throwing callback is reported to the owner. */
  emit(e: StoreEvent): void {
    if (this.stopped) return;
    try {
      this.#onEvent(e);
    } catch (err) {
      this.#control.failed(this, err);
    }
  }
}
