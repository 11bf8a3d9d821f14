/**
 * The Route controller (issue 10: a route is a grant, ADR 0049): for each Route it creates and owns the
 * Certificate of the same name (route-status.ts decides its spec), keeps that Certificate's spec following
 * the Route's host and node, and writes the Route's status (certificateRef, Ready). Deleting a Route deletes
 * its Certificate through the ownerReference (the store cascades). The Certificate controller (branch
 * i10-certs) issues it; the Declaration controller renders the route into its node's Declaration.
 *
 * The key is a route name. A Route maps to itself, a Certificate to its own name, a Declaration (named after
 * its node) to the routes of that node, so the agent's report of the HttpsProxy resource updates Ready.
 * Writes carry the cached resourceVersion: a stale cache ends in a Conflict, thrown and retried.
 */
import type { Client } from '../api/client/types.ts';
import { findCondition } from '../api/meta/conditions.ts';
import type { Logger } from '../api/meta/logger.ts';
import { realClock, type Clock } from '../api/meta/clock.ts';
import { rfc3339 } from '../api/meta/timestamp.ts';
import type { KubeObject } from '../api/meta/types.ts';
import type { Route } from '../api/v1alpha1/generated/index.ts';
import { createController, type Controller, type Reconciler } from './runtime/controller.ts';
import { informersFor, type ControllerOptions, type Informers } from './runtime/manager.ts';
import { certificateToWrite, routeStatus } from './route-status.ts';
import { isDeepStrictEqual } from 'node:util';

/** Options of createRouteController. */
export type RouteControllerOptions = ControllerOptions;

type Caches = Informers<'routes' | 'certificates' | 'declarations'>;

/** Creates the Route controller; add it to the manager, which starts it once the caches are synced. */
export function createRouteController(opts: RouteControllerOptions): Controller {
  const { manager } = opts;
  const clock = opts.clock ?? realClock;
  const caches: Caches = informersFor(manager, ['routes', 'certificates', 'declarations']);
  const reconciler = new RouteReconciler({ client: manager.client, caches, logger: manager.logger, clock });
  const ofNode = (obj: KubeObject): string[] =>
    caches.routes
      .list()
      .filter((r) => r.spec.node === obj.metadata.name)
      .map((r) => r.metadata.name ?? '');
  return createController({
    name: 'route',
    reconciler,
    workers: opts.workers ?? 2,
    clock,
    logger: manager.logger,
    sources: [
      { informer: caches.routes },
      { informer: caches.certificates },
      { informer: caches.declarations, keys: ofNode },
    ],
  });
}

/** Reconciles one route: its Certificate, then its status. */
class RouteReconciler implements Reconciler {
  private readonly client: Client;
  private readonly caches: Caches;
  private readonly logger: Logger;
  private readonly clock: Clock;

  constructor(opts: { client: Client; caches: Caches; logger: Logger; clock: Clock }) {
    this.client = opts.client;
    this.caches = opts.caches;
    this.logger = opts.logger;
    this.clock = opts.clock;
  }

  async reconcile(name: string): Promise<void> {
    const route = this.caches.routes.get(name);
    if (!route || route.metadata.deletionTimestamp) return;
    const current = this.caches.certificates.get(name);
    const next = certificateToWrite(route, current);
    let cert = current;
    if (next) {
      cert = current ? await this.client.update('certificates', next) : await this.client.create('certificates', next);
      this.logger.info(current ? 'Updated Certificate' : 'Created Certificate', {
        route: name,
        host: route.spec.host,
        node: route.spec.node,
      });
    }
    await this.writeStatus(route, cert);
  }

  private async writeStatus(route: Route, cert: Parameters<typeof routeStatus>[0]['cert']): Promise<void> {
    const declaration = this.caches.declarations.get(route.spec.node);
    const status = routeStatus({ route, cert, declaration, now: rfc3339(this.clock.now()) });
    if (isDeepStrictEqual(route.status, status)) return;
    await this.client.updateStatus('routes', { ...route, status });
    const ready = findCondition(status.conditions, 'Ready');
    this.logger.info('Updated Route status', {
      route: route.metadata.name,
      ready: ready?.status,
      reason: ready?.reason,
    });
  }
}
