/**
 * Who may do what in a mesh, wired for `createApp`: the bearer authenticator (the admin token, then node
 * credentials issued at join), the Node authorizer (node-authorizer.ts), the NodeRestriction store view for
 * node requests (node-restriction.ts) with the nodes' heartbeat leases (node-leases.ts), and the join endpoints (`GET /cluster-info`, `POST /join`, and
 * JoinToken creation, which returns the token once). The control-plane process and the test harness both
 * build their app with it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { realClock, type Clock } from '../../meta/clock.ts';
import type { Logger } from '../../meta/logger.ts';
import { silentLogger } from '../../meta/logger.ts';
import type { Store } from '../../store/types.ts';
import { bearerAuthenticator, type Authenticator, type Authorizer, type Identity } from './auth.ts';
import { createClusterInfoHandler } from './cluster-info.ts';
import { createNodeCredentials, type NodeCredentials } from './credentials.ts';
import { createJoinHandler, type JoinRate } from './join-handler.ts';
import { createJoinToken, type TokenCreateRequest } from './join-token-lifecycle.ts';
import { EventQuota, type EventLimits } from './event-quota.ts';
import { nodeAuthorizer } from './node-authorizer.ts';
import { storeFor } from './node-restriction.ts';
import { NodeLeases } from './node-leases.ts';

/** The join endpoints the app serves besides the resource routes. */
export interface JoinEndpoints {
  /** `GET /cluster-info` (anonymous). */
  clusterInfo(req: IncomingMessage, res: ServerResponse): void;
  /** `POST /join` (anonymous: the join token in the body is the credential). */
  join(req: IncomingMessage, res: ServerResponse): Promise<void>;
  /** `POST .../jointokens`, already authorized: creates the token and returns it once. */
  createToken(r: TokenCreateRequest): Promise<void>;
}

/** Options of `meshAccess`. */
export interface MeshAccessOptions {
  store: Store;
  /** Hex SHA-256 of the admin token (a function so that a rotated token takes effect at once). */
  adminTokenSha256: string | (() => string);
  /** The mesh CA certificate (PEM), served by /cluster-info. */
  caPem: string;
  /** The URL /cluster-info advertises (default: what the request reached). */
  serverUrl?: () => string | undefined;
  /** The scheme of the TCP listener, which /cluster-info advertises to a request over the local socket. */
  listenerScheme?: 'http' | 'https';
  /** The clock of the rate limits and quotas (default the real one). */
  clock?: Clock;
  /** What a node may create of Events (default event-quota.ts's EVENT_LIMITS). */
  eventLimits?: EventLimits;
  /** Join attempts allowed (default join-handler.ts's JOIN_RATE). */
  joinRate?: JoinRate;
  logger?: Logger;
}

/** The access parts of `AppOptions`. */
export interface MeshAccess {
  authenticate: Authenticator;
  authorize: Authorizer;
  storeFor: (identity: Identity, store: Store) => Store;
  join: JoinEndpoints;
  /** The nodes' heartbeat leases (node-leases.ts): the Node controller listens to them. */
  leases: NodeLeases;
  /** Every request of a node renews its lease (NodeLeases.contact). */
  onNodeRequest: (node: string) => void;
}

/** Builds authentication, authorization and the join endpoints over the control plane's store. */
export function meshAccess(opts: MeshAccessOptions): MeshAccess {
  const logger = opts.logger ?? silentLogger;
  const clock = opts.clock ?? realClock;
  const quota = new EventQuota({ clock, ...(opts.eventLimits ? { limits: opts.eventLimits } : {}) });
  const leases = new NodeLeases({ clock });
  const credentials: NodeCredentials = createNodeCredentials({ store: opts.store });
  const clusterInfo = createClusterInfoHandler({
    caPem: opts.caPem,
    ...(opts.serverUrl ? { serverUrl: opts.serverUrl } : {}),
    ...(opts.listenerScheme ? { listenerScheme: opts.listenerScheme } : {}),
  });
  return {
    authenticate: bearerAuthenticator({
      adminTokenSha256: opts.adminTokenSha256,
      resolve: (sha) => credentials.resolve(sha),
    }),
    authorize: nodeAuthorizer,
    storeFor: (identity, store) => storeFor(identity, store, quota, leases),
    leases,
    onNodeRequest: (node) => leases.contact(node),
    join: {
      clusterInfo,
      join: createJoinHandler({
        store: opts.store,
        credentials,
        logger,
        clock,
        ...(opts.joinRate ? { rate: opts.joinRate } : {}),
      }),
      createToken: createJoinToken,
    },
  };
}
