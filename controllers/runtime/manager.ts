/**
 * The controller manager: holds the controllers of one process, shares informers between them,
 * starts informers first, waits for their caches to sync, then starts the workers, and stops everything.
 */
import type { Client } from '../../api/client/types.ts';
import { realClock, type Clock } from '../../api/meta/clock.ts';
import type { Controller } from './controller.ts';
import { createInformer, type Informer, type InformerOptions } from '../../api/client/informer.ts';
import type { ObjectOf } from '../../api/v1alpha1/generated/resources.ts';
import type { Logger } from '../../api/meta/logger.ts';

/** Options of createManager. */
export interface ManagerOptions {
  client: Client;
  logger: Logger;
  clock?: Clock;
  /** Backoff of the shared informers' list/watch retries (see InformerOptions). */
  backoff?: { baseMs?: number; maxMs?: number };
  /** The shared informers' `share` (InformerOptions): in the control plane, the store's copy of each object. */
  share?: InformerOptions['share'];
}

/** What each controller's constructor takes: the manager (client, logger, shared informers), a clock, a worker count. */
export interface ControllerOptions {
  /** Supplies the client, the logger and the shared informers. */
  manager: Pick<Manager, 'client' | 'logger' | 'informerFor'>;
  /** The controller's time: work-queue delays, and the timestamps it writes. Default: the real clock. */
  clock?: Clock;
  /** Keys reconciled at once (never one key twice). Each controller has its default. */
  workers?: number;
}

/** Shared informers by plural, each typed by its plural: what a controller reads from. */
export type Informers<P extends string> = { [K in P]: Informer<ObjectOf<K>> };

/** The manager's shared informers of `plurals`, by plural. */
export function informersFor<const P extends string>(
  manager: Pick<Manager, 'informerFor'>,
  plurals: readonly P[],
): Informers<P> {
  return Object.fromEntries(plurals.map((p) => [p, manager.informerFor(p)])) as Informers<P>;
}

/** Runs a set of controllers against one API server. */
export interface Manager {
  readonly client: Client;
  readonly logger: Logger;
  /** The shared informer of a kind (all objects, no selector), created on first use; typed by its plural. */
  informerFor<P extends string>(plural: P): Informer<ObjectOf<P>>;
  add(controller: Controller): void;
  /** Starts every informer, waits until all have synced, then starts every controller. Resolves false if stopped first. */
  start(): Promise<boolean>;
  /** Stops the controllers (finishing current keys), then the informers. */
  stop(): Promise<void>;
}

/** Creates a manager; add controllers, then `start()`. */
export function createManager(opts: ManagerOptions): Manager {
  const clock = opts.clock ?? realClock;
  const shared = new Map<string, Informer>();
  const controllers: Controller[] = [];
  let stopped = false;
  const allInformers = (): Informer[] => [...new Set([...shared.values(), ...controllers.flatMap((c) => c.informers)])];
  return {
    client: opts.client,
    logger: opts.logger,
    informerFor<P extends string>(plural: P): Informer<ObjectOf<P>> {
      let inf = shared.get(plural);
      if (!inf) {
        const { client, logger, backoff, share } = opts;
        inf = createInformer({ client, plural, clock, logger, backoff, share });
        shared.set(plural, inf);
      }
      // The informer of `plural` lists and watches `plural`: its objects are that plural's type.
      return inf as Informer<ObjectOf<P>>;
    },
    add(controller) {
      controllers.push(controller);
    },
    async start() {
      const informers = allInformers();
      for (const inf of informers) inf.start();
      const synced = await Promise.all(informers.map((inf) => inf.waitForSync()));
      if (stopped || synced.includes(false)) return false;
      for (const c of controllers) c.start();
      opts.logger.info('Started controllers', {
        controllers: controllers.map((c) => c.name),
        informers: informers.length,
      });
      return true;
    },
    async stop() {
      stopped = true;
      await Promise.all(controllers.map((c) => c.stop()));
      await Promise.all(allInformers().map((inf) => inf.stop()));
      opts.logger.info('Stopped controllers', { controllers: controllers.map((c) => c.name) });
    },
  };
}
