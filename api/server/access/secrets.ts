/**
 * The control plane's secrets: objects of the INTERNAL plural `secrets` (kind `Secret`, apiVersion
 * `meshctl.dev/internal`) in its own store. `secrets` is not a registered kind, so the API never routes to
 * it: only this process reads or writes them, through the Store object. Each Secret is owned (ownerReferences)
 * by the object it belongs to, so deleting a JoinToken or a Node deletes its secret by cascade.
 *
 *   jointoken.<id>  type join-token        data.sha256: hash of the whole join token
 *   node.<node>     type node-credential   data.sha256: hash of the node credential; data.nodeKey: its public key
 *   certificate.<name>  type certificate   a Certificate's issued chain, key and CA (../certs/vault.ts), owned by it
 *   acme.account        type acme-account  the ACME account key (../certs/vault.ts), owned by the Mesh
 */
import { timingSafeEqual } from 'node:crypto';
import { ApiError } from '../../meta/api-error.ts';
import type { KubeObject, OwnerReference } from '../../meta/types.ts';
import type { Store } from '../../store/types.ts';

/** The store plural of secrets (never served by the API). */
export const SECRETS = 'secrets';
/** The apiVersion of secrets. */
export const SECRET_API_VERSION = 'meshctl.dev/internal';

/** What a secret is for. */
export type SecretType = 'join-token' | 'node-credential' | 'certificate' | 'acme-account';

/** A secret as stored. */
export interface Secret extends KubeObject {
  kind: 'Secret';
  type: SecretType;
  data: Record<string, string>;
}

/** The name of a join token's secret. */
export function joinTokenSecretName(id: string): string {
  return `jointoken.${id}`;
}

/** The name of a node credential's secret. */
export function nodeSecretName(node: string): string {
  return `node.${node}`;
}

/** The owner reference that ties a secret to `owner` (deleting the owner deletes the secret). */
export function ownerReference(owner: KubeObject): OwnerReference {
  const uid = owner.metadata.uid;
  if (!uid)
    throw new ApiError({
      reason: 'InternalError',
      message: `cannot own a secret by ${owner.kind} "${owner.metadata.name}": it has no uid`,
    });
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name ?? '',
    uid,
    controller: true,
    blockOwnerDeletion: false,
  };
}

/** Reads a secret of a type; undefined when it is missing or of another type. */
export function readSecret(store: Store, name: string, type: SecretType): Secret | undefined {
  const obj = store.get(SECRETS, name) as Secret | undefined;
  return obj && obj.type === type && obj.data && typeof obj.data === 'object' ? obj : undefined;
}

/** Options of `writeSecret`. */
export interface WriteSecretOptions {
  name: string;
  type: SecretType;
  owner: KubeObject;
  data: Record<string, string>;
}

/** Creates or replaces a secret (owned by `owner`); resolves once durable. */
export async function writeSecret(store: Store, opts: WriteSecretOptions): Promise<void> {
  const obj: Secret = {
    apiVersion: SECRET_API_VERSION,
    kind: 'Secret',
    type: opts.type,
    data: opts.data,
    metadata: { name: opts.name, ownerReferences: [ownerReference(opts.owner)] },
  };
  if (store.get(SECRETS, opts.name)) await store.update(SECRETS, obj);
  else await store.create(SECRETS, obj);
}

/** Compares two hex SHA-256 digests in constant time (false when either is malformed). */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === 32 && y.length === 32 && timingSafeEqual(x, y);
}
