/**
 * The agent's identity: node name, root, control-plane connection and site. Given at first start
 * (flags / options) and saved in the agent's store, so later starts need only the state directory.
 * A later start may pass a new connection (a rotated credential) or site, but never another node name
 * or root: the store's inventory belongs to that node and resolves under that root.
 */
import { resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import type { ClientConfig } from '../api/client/types.ts';
import type { RootOrigin } from './root-dir.ts';
import type { AgentIdentity } from './store/agent-store.ts';

/** What the caller gave for this start. */
export interface IdentityInput {
  nodeName?: string;
  root?: string;
  connection?: ClientConfig;
  site?: string;
}

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * Merges this start's input with the stored identity; throws a readable Error on a mismatch or a gap.
 * `rootFrom` says where the root came from (undefined: the default `/`).
 */
export function resolveIdentity(
  stored: AgentIdentity | undefined,
  input: IdentityInput,
  stateDir: string,
): { identity: AgentIdentity; changed: boolean; rootFrom?: RootOrigin } {
  const nodeName = input.nodeName ?? stored?.nodeName;
  if (nodeName === undefined)
    throw new Error(`${stateDir} holds no agent yet: the first start needs the node name (--name)`);
  if (!NAME.test(nodeName) || nodeName.length > 253) {
    throw new Error(`invalid node name "${nodeName}": must be a lowercase RFC 1123 subdomain (e.g. node-a)`);
  }
  if (stored && stored.nodeName !== nodeName) {
    throw new Error(
      `${stateDir} belongs to node "${stored.nodeName}", not "${nodeName}" (one state directory per node)`,
    );
  }
  const root = resolve(input.root ?? stored?.root ?? '/');
  if (stored && stored.root !== root) {
    throw new Error(
      `${stateDir} manages root ${stored.root}, not ${root}: the owned resources live there (start without --root or with --root ${stored.root})`,
    );
  }
  const conn =
    input.connection ?? (stored ? { server: stored.server, caData: stored.caData, token: stored.token } : undefined);
  if (!conn?.server)
    throw new Error(`${stateDir} holds no control-plane connection: the first start needs --config MESHCONFIG`);
  const site = input.site ?? stored?.site;
  const identity: AgentIdentity = {
    nodeName,
    root,
    server: conn.server,
    ...(conn.caData ? { caData: conn.caData } : {}),
    ...(conn.token ? { token: conn.token } : {}),
    ...(site ? { site } : {}),
  };
  const rootFrom: RootOrigin | undefined = input.root !== undefined ? 'flag' : stored ? 'stored' : undefined;
  return { identity, changed: !isDeepStrictEqual(identity, stored), ...(rootFrom ? { rootFrom } : {}) };
}
