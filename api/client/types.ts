/**
 * The contract of the typed client used by meshctl, the controllers and the agent.
 * All methods reject with ApiError (a `Status` from the server, or ServiceUnavailable when unreachable).
 * Each method is generic over the plural: `get('nodes', n)` resolves to a `Node` (see ObjectOf in
 * api/v1alpha1/generated/resources.ts); a plural known only at run time (a `string`) gives a `KubeObject`.
 */
import type { Clock } from '../meta/clock.ts';
import type { KubeObject, ObjectList, WatchEvent } from '../meta/types.ts';
import type { ObjectOf } from '../v1alpha1/generated/resources.ts';

/** Where and how to reach a control plane: what a meshconfig file holds. */
export interface ClientConfig {
  /** e.g. `https://127.0.0.1:6443` */
  server: string;
  /** PEM of the CA that signed the server's certificate (https only). */
  caData?: string;
  /** Bearer token. */
  token?: string;
  /**
   * A Unix domain socket the control plane also serves its API on (its own machine only: the admin meshconfig's
   * `meshctl.dev/local-socket` cluster extension). Plain requests try it first, without TLS; when it cannot be
   * connected to (gone, refused, no permission) they go to `server`, silently.
   */
  socketPath?: string;
  /** Per-request timeout in ms (not applied to watches). Default 30 000. */
  timeoutMs?: number;
  /** How long opening an https connection (TCP and the TLS handshake) may take, in ms. Default `timeoutMs`. */
  connectTimeoutMs?: number;
  /**
   * Connections at most for plain requests (watches have their own); a request finding them all busy waits for one.
   * Default: no bound.
   */
  maxConnections?: number;
  /**
   * Called with the text of each `Warning` header of an answer (kube-apiserver's `299 - "text"`), as client-go's
   * WarningHandler is; meshctl prints them. Without it, warnings are ignored.
   */
  onWarning?: (text: string) => void;
  /** How many times a `429 TooManyRequests` is sent again after its `Retry-After` (default 10). */
  maxRetries?: number;
  /**
   * Spreads the retries of a 429: each waits `Retry-After × (1 + retryJitter × r)`, r drawn from [0, 1) — never
   * sooner than the server asked, so that clients refused at once do not all come back at once. Default 0.
   */
  retryJitter?: number;
  /** The draw of retryJitter (default Math.random; tests inject one). */
  random?: () => number;
  /** The clock those waits run on (default the real one; tests inject a fake). */
  clock?: Clock;
}

export interface ClientListOptions {
  labelSelector?: string;
  fieldSelector?: string;
}

export interface ClientWriteOptions {
  dryRun?: boolean;
}

export interface ClientWatchOptions extends ClientListOptions {
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /** No MODIFIED event for a change of nothing but `.status` (`omitStatusUpdates=true`, api/server/resources/watch.ts). */
  omitStatusUpdates?: boolean;
}

/** An open watch stream; `events` ends when the server closes or `close()` is called. */
export interface WatchStream<T extends KubeObject = KubeObject> {
  events: AsyncIterable<WatchEvent<T>>;
  close(): void;
}

/** The API client: one method per verb, each typed by the plural it is given. */
export interface Client {
  get<P extends string>(plural: P, name: string): Promise<ObjectOf<P>>;
  list<P extends string>(plural: P, opts?: ClientListOptions): Promise<ObjectList<ObjectOf<P>>>;
  create<P extends string>(plural: P, obj: ObjectOf<P>, opts?: ClientWriteOptions): Promise<ObjectOf<P>>;
  update<P extends string>(plural: P, obj: ObjectOf<P>, opts?: ClientWriteOptions): Promise<ObjectOf<P>>;
  updateStatus<P extends string>(plural: P, obj: ObjectOf<P>, opts?: ClientWriteOptions): Promise<ObjectOf<P>>;
  /** JSON merge patch (RFC 7386): `null` deletes a field. */
  patch<P extends string>(
    plural: P,
    name: string,
    patch: unknown,
    opts?: ClientWriteOptions & { subresource?: 'status' },
  ): Promise<ObjectOf<P>>;
  delete<P extends string>(
    plural: P,
    name: string,
    opts?: ClientWriteOptions & { propagationPolicy?: 'Orphan' | 'Background' },
  ): Promise<ObjectOf<P>>;
  /** Opens `?watch=1`; a 410 surfaces as an ERROR event whose object is a Status with code 410. */
  watch<P extends string>(plural: P, opts?: ClientWatchOptions): Promise<WatchStream<ObjectOf<P>>>;
  /** Raw GET of any path (discovery, /version). */
  raw(path: string): Promise<unknown>;
}
