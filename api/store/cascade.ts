/**
 * Deletion with finalizers and ownerReferences, inside one Txn (so an owner and its dependents are
 * journaled as one line). When an object is actually removed, its dependents (objects whose
 * ownerReferences name its uid) are deleted in turn, honouring their own finalizers, unless the policy is
 * Orphan, which removes the reference instead. Like the Kubernetes garbage collector, a dependent that still
 * has another existing owner is not deleted: only its reference to the removed owner is dropped.
 * `Foreground` is treated like `Background` (dependents go in the same operation).
 */
import type { KubeObject } from '../meta/types.ts';
import type { DeleteOptions } from './types.ts';
import { rfc3339 } from '../meta/timestamp.ts';
import { hasFinalizers, withMeta } from './object-meta.ts';
import type { StoreState, Txn } from './state.ts';

type Policy = DeleteOptions['propagationPolicy'];

function withoutOwner(obj: KubeObject, uid: string): KubeObject {
  return withMeta(obj, { ownerReferences: (obj.metadata.ownerReferences ?? []).filter((r) => r.uid !== uid) });
}

/** Sets deletionTimestamp (once) on an object with finalizers; returns the (possibly unchanged) object. */
export function markDeleting(state: StoreState, txn: Txn, plural: string, obj: KubeObject): KubeObject {
  if (obj.metadata.deletionTimestamp) return obj;
  return state.put(txn, plural, withMeta(obj, { deletionTimestamp: rfc3339() }), 'MODIFIED');
}

/** Drops the references to `uid` from every dependent of it. */
export function orphanDependents(state: StoreState, txn: Txn, uid: string): void {
  for (const ref of state.dependents(uid)) {
    const dep = state.get(ref.plural, ref.name);
    if (dep) state.put(txn, ref.plural, withoutOwner(dep, uid), 'MODIFIED');
  }
}

/** Handles one dependent of a removed owner; returns its uid when it was removed too (its dependents are next). */
function deleteDependent(
  state: StoreState,
  txn: Txn,
  plural: string,
  dep: KubeObject,
  ownerUid: string,
): string | undefined {
  const otherOwners = (dep.metadata.ownerReferences ?? []).filter((r) => r.uid !== ownerUid && state.hasUid(r.uid));
  if (otherOwners.length > 0) state.put(txn, plural, withoutOwner(dep, ownerUid), 'MODIFIED');
  else if (hasFinalizers(dep)) markDeleting(state, txn, plural, dep);
  else {
    state.remove(txn, plural, dep);
    return dep.metadata.uid;
  }
  return undefined;
}

/**
 * Removes an object now and cascades to its dependents per `policy`; returns the object as deleted.
 * The cascade walks a work list, not the call stack, so an ownership chain of any depth cannot overflow it.
 */
export function removeObject(state: StoreState, txn: Txn, plural: string, obj: KubeObject, policy: Policy): KubeObject {
  const gone = state.remove(txn, plural, obj);
  const uid = obj.metadata.uid;
  if (!uid) return gone;
  if (policy === 'Orphan') {
    orphanDependents(state, txn, uid);
    return gone;
  }
  const owners = [uid];
  for (let owner = owners.pop(); owner !== undefined; owner = owners.pop()) {
    for (const ref of state.dependents(owner)) {
      const dep = state.get(ref.plural, ref.name);
      const removed = dep && deleteDependent(state, txn, ref.plural, dep, owner);
      if (removed) owners.push(removed);
    }
  }
  return gone;
}
