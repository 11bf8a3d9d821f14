/**
 * The ownerReference a controller puts on an object it creates for an owner, as kube's `metav1.NewControllerRef`:
 * `controller: true`, and `blockOwnerDeletion` so that a foreground delete of the owner waits for it.
 */
import { API_VERSION, type OwnerReference } from './types.ts';

/** The controller reference to `owner` of kind `kind` (one of ours, in API_VERSION). */
export function controllerReference(
  kind: string,
  owner: { metadata: { name?: string; uid?: string } },
): OwnerReference {
  return {
    apiVersion: API_VERSION,
    kind,
    name: owner.metadata.name ?? '',
    uid: owner.metadata.uid ?? '',
    controller: true,
    blockOwnerDeletion: true,
  };
}
