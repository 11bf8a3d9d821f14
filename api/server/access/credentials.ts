/**
 * Per-node credentials: issued at join (a random bearer token shown once to the joining agent), kept only
 * as their SHA-256 in Secret `node.<node>` (secrets.ts) beside the node's public key, and resolved to the
 * identity `{kind: 'node', name}` by the bearer authenticator (auth.ts `resolve`).
 *
 * Lookup keeps an in-memory index hash → node. The index is only a hint: every hit is checked against the
 * secret in the store (so a replaced or deleted credential — a re-join, or the Node deleted, which deletes
 * its secret by cascade — stops working at once), and a miss rebuilds the index from the store (there are
 * few nodes), so credentials written by another path (a restore) are found too.
 */
import { randomBytes } from 'node:crypto';
import type { KubeObject } from '../../meta/types.ts';
import type { Store } from '../../store/types.ts';
import { hashToken, type Identity } from './auth.ts';
import { SECRETS, nodeSecretName, readSecret, sameHash, writeSecret, type Secret } from './secrets.ts';

/** Per-node credentials over the control plane's store. */
export interface NodeCredentials {
  /** The node a credential hash belongs to (auth.ts `resolve` hook), or undefined. */
  resolve(tokenSha256: string): Identity | undefined;
  /** The public key (base64 SPKI DER) a node joined with, or undefined when it has no credential. */
  nodeKey(node: string): string | undefined;
  /** Issues a new credential for `node` (replacing any previous one); resolves with it once durable. */
  issue(node: KubeObject, nodeKey: string): Promise<string>;
}

/** Options of `createNodeCredentials`. */
export interface NodeCredentialsOptions {
  store: Store;
  /** Rebuilds of the index on a miss are limited to one per this many ms (default 1000). */
  rebuildIntervalMs?: number;
}

/** Creates the node credentials over `store`. */
export function createNodeCredentials(opts: NodeCredentialsOptions): NodeCredentials {
  const { store } = opts;
  let index = new Map<string, string>();
  let builtAtRv = '';
  let builtAt = 0;

  const rebuild = (): void => {
    const next = new Map<string, string>();
    for (const obj of store.list(SECRETS).items) {
      const s = obj as Secret;
      if (s.type === 'node-credential' && typeof s.data?.sha256 === 'string')
        next.set(s.data.sha256, s.metadata.name!.slice('node.'.length));
    }
    index = next;
    builtAtRv = store.resourceVersion();
    builtAt = Date.now();
  };
  rebuild();

  /**
   * `node`'s credential Secret, only while it belongs to the Node that exists under that name now: a Node
   * deleted with propagationPolicy=Orphan leaves its Secret behind, and that credential must stop working
   * (and the name must be free to join again) all the same.
   */
  const secretOf = (node: string) => {
    const secret = readSecret(store, nodeSecretName(node), 'node-credential');
    const uid = store.get('nodes', node)?.metadata.uid;
    return secret && uid && secret.metadata.ownerReferences?.some((r) => r.uid === uid) ? secret : undefined;
  };

  /**
   * The Secret and Node objects a hash was last found to match, by Secret: the store replaces an object at every
   * write, so while the node's Secret and Node are the very objects checked, the answer stands (every request of a
   * node is authenticated: at 5,000 nodes, over 600 a second).
   */
  const verified = new WeakMap<object, { sha: string; node: object }>();

  /** True when `node`'s stored credential has this hash (constant time when checked). */
  const matches = (node: string, sha: string): boolean => {
    const secretObj = store.get(SECRETS, nodeSecretName(node));
    const nodeObj = store.get('nodes', node);
    const last = secretObj && verified.get(secretObj);
    if (last && last.node === nodeObj && last.sha === sha) return true;
    const stored = secretOf(node)?.data.sha256;
    const ok = stored !== undefined && sameHash(stored, sha);
    if (ok && secretObj && nodeObj) verified.set(secretObj, { sha, node: nodeObj });
    return ok;
  };

  return {
    resolve(sha) {
      let node = index.get(sha);
      if (node === undefined) {
        const changed = store.resourceVersion() !== builtAtRv;
        if (!changed || Date.now() - builtAt < (opts.rebuildIntervalMs ?? 1000)) return undefined;
        rebuild();
        node = index.get(sha);
      }
      return node !== undefined && matches(node, sha) ? { kind: 'node', name: node } : undefined;
    },
    nodeKey: (node) => secretOf(node)?.data.nodeKey,
    async issue(node, nodeKey) {
      const name = node.metadata.name!;
      const credential = randomBytes(32).toString('base64url');
      const sha256 = hashToken(credential);
      await writeSecret(store, {
        name: nodeSecretName(name),
        type: 'node-credential',
        owner: node,
        data: { sha256, nodeKey },
      });
      for (const [h, n] of index) if (n === name) index.delete(h);
      index.set(sha256, name);
      return credential;
    },
  };
}
