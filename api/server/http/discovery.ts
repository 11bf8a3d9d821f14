/**
 * The discovery documents kubectl and other Kubernetes clients read before anything else: `/version`,
 * `/api` and `/api/v1` (core/v1 with one resource, `events`: the read-only view `kubectl describe` reads,
 * resources/core-events.ts; with nothing else there, `nodes` still maps to ours), `/apis`,
 * `/apis/meshctl.dev` and `/apis/meshctl.dev/v1alpha1`. Served as plain JSON: a client asking for
 * aggregated discovery (`as=APIGroupDiscoveryList`) sees a plain Content-Type and falls back to these.
 */
import { API_VERSION, GROUP, VERSION } from '../../meta/types.ts';
import type { KindInfo } from '../../v1alpha1/kind-info.ts';
import { KINDS } from '../../v1alpha1/kinds.ts';
import type { DiscoveryDoc } from './routes.ts';
import { versionInfo } from './version.ts';

/** The verbs every kind supports on its main resource and on `/status`. */
export const RESOURCE_VERBS = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
export const STATUS_VERBS = ['get', 'patch', 'update'];

const groupVersion = { groupVersion: API_VERSION, version: VERSION };

function apiGroup(): Record<string, unknown> {
  return { name: GROUP, versions: [groupVersion], preferredVersion: groupVersion };
}

function apiResources(kinds: readonly KindInfo[]): Record<string, unknown>[] {
  return kinds.flatMap((k) => [
    {
      name: k.plural,
      singularName: k.singular,
      namespaced: false,
      kind: k.kind,
      verbs: RESOURCE_VERBS,
      shortNames: k.shortNames,
      categories: ['all', 'meshctl'],
    },
    ...(k.hasStatus
      ? [{ name: `${k.plural}/status`, singularName: '', namespaced: false, kind: k.kind, verbs: STATUS_VERBS }]
      : []),
  ]);
}

/** `/api/v1`: only `events`, read-only (get, list, watch), namespaced as core/v1 Events are. */
function coreResourceList(): Record<string, unknown> {
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'v1',
    resources: [
      { name: 'events', singularName: 'event', namespaced: true, kind: 'Event', verbs: ['get', 'list', 'watch'] },
    ],
  };
}

/** The body of a discovery document. */
export function discoveryDocument(doc: DiscoveryDoc, kinds: readonly KindInfo[] = KINDS): unknown {
  switch (doc) {
    case 'version':
      return versionInfo();
    case 'api':
      return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] };
    case 'core':
      return coreResourceList();
    case 'apis':
      return { kind: 'APIGroupList', apiVersion: 'v1', groups: [apiGroup()] };
    case 'group':
      return { kind: 'APIGroup', apiVersion: 'v1', ...apiGroup() };
    case 'resources':
      return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: API_VERSION, resources: apiResources(kinds) };
  }
}
