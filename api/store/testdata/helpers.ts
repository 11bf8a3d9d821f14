/**
 * Test helpers for the store's tests: temp directories cleaned up after each test, sample objects,
 * and a watch recorder that can wait for events.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import type { KubeObject } from '../../meta/types.ts';
import { nodeStoreFs, type StoreFs } from '../store-fs.ts';
import {
  openStore,
  type FileStore,
  type ListOptions,
  type OpenStoreOptions,
  type StoreWatchEvent,
  type UpdateOptions,
  type WriteOptions,
} from '../index.ts';

/**
 * The store as its own tests use it: every plural a run-time string, every object a KubeObject (they test
 * storage, not schemas, and keep Node-like objects under any plural). A FileStore is one as it is.
 */
export interface AnyKindStore extends Omit<FileStore, 'get' | 'list' | 'create' | 'update'> {
  get(plural: string, name: string): KubeObject | undefined;
  list(plural: string, opts?: ListOptions): { items: KubeObject[]; resourceVersion: string };
  create(plural: string, obj: KubeObject, opts?: WriteOptions): Promise<KubeObject>;
  update(plural: string, obj: KubeObject, opts?: UpdateOptions): Promise<KubeObject>;
}

/** `openStore`, typed as the store's own tests use it. */
export function openAnyKindStore(opts: OpenStoreOptions): Promise<AnyKindStore> {
  return openStore(opts);
}

/** A temp directory removed when the test ends. */
export function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'meshctl-store-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Opens a store in a fresh temp dir (or `dir`), closed when the test ends. Log lines go to `logs`. */
export async function tempStore(
  t: TestContext,
  opts: Partial<OpenStoreOptions> = {},
): Promise<{ store: AnyKindStore; dir: string; logs: object[] }> {
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'meshctl-store-'));
  const logs: object[] = [];
  const store = await openAnyKindStore({ ...opts, dir, logger: (l) => logs.push(l) });
  t.after(async () => {
    await store.close();
    if (!opts.dir) rmSync(dir, { recursive: true, force: true });
  });
  return { store, dir, logs };
}

/** A Node-like object. */
export function node(name: string, extra: Partial<KubeObject> & { labels?: Record<string, string> } = {}): KubeObject {
  const { labels, ...rest } = extra;
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { site: 'home' },
    ...rest,
  };
}

/** Records a watch's events; `next(n)` waits until n events arrived (or fails after 2 s). */
export function record(store: AnyKindStore, plural: string, opts: Parameters<FileStore['watch']>[1] = {}) {
  const events: StoreWatchEvent[] = [];
  let wake: (() => void) | undefined;
  const w = store.watch(plural, opts, (e) => {
    events.push(e);
    wake?.();
  });
  async function next(n: number): Promise<StoreWatchEvent[]> {
    const deadline = Date.now() + 2000;
    while (events.length < n) {
      if (Date.now() > deadline)
        throw new Error(`expected ${n} events, got ${events.length}: ${JSON.stringify(summary())}`);
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 20);
      });
    }
    return events.slice(0, n);
  }
  const summary = () =>
    events.map((e) => `${e.type} ${e.object.metadata?.name ?? ''} ${e.object.metadata?.resourceVersion ?? ''}`.trim());
  return { events, next, summary, stop: () => w.stop() };
}

/** Waits a few event-loop turns (for events that should NOT arrive). */
export function settle(ms = 30): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Keeps the event loop busy for about `ms` from now: one turn of 15 ms of synchronous work after another (what a
 * burst of requests does to it). Returns when the spell ends, in performance.now() time.
 */
export function busySpell(ms: number): number {
  const until = performance.now() + ms;
  const spin = (): void => {
    const end = performance.now() + 15;
    while (performance.now() < end);
    if (performance.now() < until) setImmediate(spin);
  };
  setImmediate(spin);
  return until;
}

/**
 * A store filesystem whose fdatasync can be held: after `hold()`, each fdatasync waits until `release()`.
 * `reached(what)` waits until one is waiting (what: a message for the assertion that fails after 10 s).
 */
export function heldDataSync() {
  let held: (() => void)[] | undefined;
  const fs: StoreFs = {
    ...nodeStoreFs,
    dataSync: async (fd) => {
      if (held) await new Promise<void>((resolve) => held?.push(resolve));
      return nodeStoreFs.dataSync(fd);
    },
  };
  return {
    fs,
    hold: (): void => {
      held = [];
    },
    async reached(what: string): Promise<void> {
      const deadline = Date.now() + 10_000;
      while (!held?.length) {
        assert.ok(Date.now() < deadline, what);
        await settle(5);
      }
    },
    release: (): void => {
      const waiting = held ?? [];
      held = undefined;
      for (const resume of waiting) resume();
    },
  };
}
