/**
 * The contract of the typed client used by meshctl, the controllers and the agent.
 * All methods reject with ApiError (a `Status` from the server, or ServiceUnavailable when unreachable).
 */
import type { KubeObject, ObjectList, WatchEvent } from '../meta/types.ts';

/** Where and how to reach a control plane: what a meshconfig file holds. */
export interface ClientConfig {
  /** e.g. `https://127.0.0.1:6443` */
  server: string;
  /** PEM of the CA that signed the server's certificate (https only). */
  caData?: string;
  /** Bearer token. */
  token?: string;
  /** Per-request timeout in ms (not applied to watches). Default 30 000. */
  timeoutMs?: number;
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
}

/** An open watch stream; `events` ends when the server closes or `close()` is called. */
export interface WatchStream {
  events: AsyncIterable<WatchEvent>;
  close(): void;
}

export interface Client {
  get(plural: string, name: string): Promise<KubeObject>;
  list(plural: string, opts?: ClientListOptions): Promise<ObjectList>;
  create(plural: string, obj: KubeObject, opts?: ClientWriteOptions): Promise<KubeObject>;
  update(plural: string, obj: KubeObject, opts?: ClientWriteOptions): Promise<KubeObject>;
  updateStatus(plural: string, obj: KubeObject, opts?: ClientWriteOptions): Promise<KubeObject>;
  /** JSON merge patch (RFC 7386): `null` deletes a field. */
  patch(plural: string, name: string, patch: unknown, opts?: ClientWriteOptions & { subresource?: 'status' }): Promise<KubeObject>;
  delete(plural: string, name: string, opts?: ClientWriteOptions & { propagationPolicy?: 'Orphan' | 'Background' }): Promise<KubeObject>;
  /** Opens `?watch=1`; a 410 surfaces as an ERROR event whose object is a Status with code 410. */
  watch(plural: string, opts?: ClientWatchOptions): Promise<WatchStream>;
  /** Raw GET of any path (discovery, /version). */
  raw(path: string): Promise<unknown>;
}
