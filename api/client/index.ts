/**
 * The entry point for automation scripts: everything a TypeScript program needs to read, watch and change a
 * mesh, the same pieces the controllers, the agent and meshctl run on (re-exported, not copied).
 *
 * - `loadMeshconfig(path)` + `createClient(config)`: the typed client. One method per verb (`get`, `list`,
 *   `create`, `update`, `updateStatus`, `patch` — a JSON merge patch, `null` deletes a field — `delete`,
 *   `watch`), each typed by the plural it is given (`get('nodes', 'a')` resolves to a `Node`); every failure
 *   is an `ApiError` carrying the server's `Status` (`isReason(e, 'NotFound')`), an unreachable control plane
 *   included (`isUnreachable(e)`).
 * - `startListWatch({ client, plural, onList, onEvent })`: list, then watch from that resourceVersion; a stream
 *   the server closes is resumed from the last resourceVersion seen, an expired one (410 Gone) relists, and
 *   failures back off and retry — for scripts that react to each event.
 * - `createInformer({ client, plural })`: the same loop keeping a cache (`get(name)`, `list()`) and reporting
 *   ADDED/MODIFIED/DELETED with the old object; after a relist it reports the differences, so nothing is missed
 *   across a control-plane restart.
 * - `WorkQueue`: client-go's queue between an informer and a worker: repeated keys collapse, one key is never
 *   processed twice at once, `addRateLimited` retries a failed key with per-key backoff (`forget` resets it).
 *
 * A runnable example that labels nodes while they are unreachable: hack/examples/label-unreachable.ts (README,
 * "Writing an automation script").
 */
export { createClient, isUnreachable, type HttpClient } from './http-client.ts';
export { loadMeshconfig, parseMeshconfig } from './meshconfig.ts';
export type { Client, ClientConfig, ClientListOptions, ClientWatchOptions, WatchStream } from './types.ts';
export { startListWatch, isGone, type ListWatch, type ListWatchOptions } from './list-watch.ts';
export { createInformer, type EventHandler, type Informer, type InformerOptions } from './informer.ts';
export type { InformerEventType } from './object-cache.ts';
export { WorkQueue, type WorkQueueOptions } from './work-queue.ts';
export { ApiError, isReason, type Status, type StatusReason } from '../meta/api-error.ts';
export { createJsonLogger, silentLogger, type Logger } from '../meta/logger.ts';
export type { Condition, KubeObject, ObjectEvent, WatchEvent } from '../meta/types.ts';
export type * from '../v1alpha1/generated/index.ts';
