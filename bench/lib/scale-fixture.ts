/**
 * The scale benchmark's bulk fixture: N nodes with credentials of their own, created straight in the store of a
 * control plane that is not running (the documented alternative to N runs of the join flow, whose rate limit —
 * 120 joins a minute — would take 40 minutes for 5,000 nodes). For each node `node-NNNNN` it creates the Node
 * (spec.site `bench`), its credential exactly as `POST /join` issues one (api/server/access/credentials.ts:
 * a random bearer token, kept only as its SHA-256 in the node's Secret, owned by the Node) and an Assignment
 * `<module>-on-<node>` of `module`. Writes go in concurrent batches, so the store's group commit keeps it fast.
 */
import { generateKeyPairSync } from 'node:crypto';
import { controlPlanePaths } from '../../api/server/pki/first-start.ts';
import { createNodeCredentials } from '../../api/server/access/credentials.ts';
import { openStore } from '../../api/store/index.ts';

/** One node's name and bearer token. */
export interface NodeCredential {
  node: string;
  token: string;
}

/** The name of the benchmark's i-th node. */
export const simNodeName = (i: number): string => `node-${String(i).padStart(5, '0')}`;

const BATCH = 500;

/** Creates `count` nodes, their credentials and Assignments of `module` in `dataDir`'s store; returns the tokens. */
export async function createScaleFixture(dataDir: string, count: number, module: string): Promise<NodeCredential[]> {
  const store = await openStore({ dir: controlPlanePaths(dataDir).store });
  try {
    const credentials = createNodeCredentials({ store });
    // Every node presents the same public key: the benchmark never uses it (it only pins the node at re-join).
    const key = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' }).toString('base64');
    const out: NodeCredential[] = [];
    for (let start = 0; start < count; start += BATCH) {
      const names = Array.from({ length: Math.min(BATCH, count - start) }, (_, k) => simNodeName(start + k));
      const batch = await Promise.all(
        names.map(async (node) => {
          const created = await store.create('nodes', {
            apiVersion: 'meshctl.dev/v1alpha1',
            kind: 'Node',
            metadata: { name: node },
            spec: { site: 'bench' },
          });
          await store.create('assignments', {
            apiVersion: 'meshctl.dev/v1alpha1',
            kind: 'Assignment',
            metadata: { name: `${module}-on-${node}` },
            spec: { module, node },
          });
          return { node, token: await credentials.issue(created, key) };
        }),
      );
      out.push(...batch);
    }
    return out;
  } finally {
    await store.close();
  }
}
