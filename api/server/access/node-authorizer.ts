/**
 * The mesh's authorizer, modelled on Kubernetes' Node authorizer: the admin may do everything; a node
 * (identity `{kind: 'node', name}`, a credential issued at join) may only
 *
 *   - get its own Node and Declaration (also their `/status`); list or watch them only when pinned to
 *     itself (`fieldSelector=metadata.name=<self>`, or the `/watch/<plural>/<self>` path);
 *   - get, list and watch the Mesh (the singleton `mesh`);
 *   - update or patch `nodes/<self>/status` and `declarations/<self>/status` (never a spec);
 *   - create Events (what an Event is about is checked on its body: node-restriction.ts);
 *   - post its own logs (`create nodes/<self>/logs`);
 *   - get the material and the pending ACME challenges of a Certificate whose spec.node is itself
 *     (`certificates/<name>/material`, `…/acme-challenge`; the handler passes the Certificate's node as
 *     `objectNode`; the admin is refused there too, by the handler: a key goes to its node only);
 *   - read the discovery documents.
 *
 * Everything else is a 403 `Status` naming the verb, the resource and the object that were refused, and why.
 */
import { parseFieldSelector } from '../../meta/selectors.ts';
import { forbidden, type Authorizer, type RequestAttributes } from './auth.ts';

/** The resources a node reads only for itself. */
const OWN = new Set(['nodes', 'declarations']);
const READ = new Set(['get', 'list', 'watch']);

/** The authorizer of the mesh (see the module comment). */
export const nodeAuthorizer: Authorizer = (identity, attrs) => {
  if (identity.kind === 'admin') return undefined;
  const why = nodeRefusal(identity.name, attrs);
  return why === undefined ? undefined : forbidden(identity, attrs, why);
};

/** Why node `self` may not do `attrs`, or undefined when it may. */
export function nodeRefusal(self: string, attrs: RequestAttributes): string | undefined {
  const { verb, plural, name, subresource } = attrs;
  if (!plural) return verb === 'get' ? undefined : 'a node may only read the discovery documents';
  if (plural === 'meshes') {
    return READ.has(verb) && !subresource && (name === undefined || name === 'mesh')
      ? undefined
      : 'a node may only read the Mesh';
  }
  if (plural === 'certificates' && (subresource === 'material' || subresource === 'acme-challenge')) {
    return verb === 'get' && attrs.objectNode === self
      ? undefined
      : `a node may only read the ${subresource} of its own certificates`;
  }
  if (plural === 'events') return verb === 'create' && name === undefined ? undefined : 'a node may only create events';
  if (!OWN.has(plural)) return `a node may not access ${plural}`;
  const own = plural === 'nodes' ? 'Node' : 'Declaration';
  if (name !== undefined && name !== self) return `a node may only access its own ${own} ("${self}")`;
  if (subresource === 'logs' && plural === 'nodes')
    return verb === 'create' ? undefined : 'a node may only post its own logs';
  if (subresource !== undefined && subresource !== 'status') return `a node may not access ${plural}/${subresource}`;
  if (verb === 'get' && name !== undefined) return undefined;
  if ((verb === 'list' || verb === 'watch') && !subresource) {
    return name === self || pinnedTo(attrs.fieldSelector, self)
      ? undefined
      : `a node may ${verb} ${plural} only with fieldSelector=metadata.name=${self}`;
  }
  if ((verb === 'update' || verb === 'patch') && subresource === 'status') return undefined;
  return `a node may only read its own ${own} and write its status`;
}

/** True when a field selector restricts the result to the object named `self`. */
function pinnedTo(selector: string | undefined, self: string): boolean {
  if (!selector) return false;
  try {
    return parseFieldSelector(selector).some(
      (r) => r.op === 'eq' && r.path.join('.') === 'metadata.name' && r.value === self,
    );
  } catch {
    return false;
  }
}
