/**
 * The object the benchmarks write: a valid `Node` (per api/v1alpha1/schemas/node.schema.json) of about
 * 1 KiB serialized, most of it in annotations (NodeSpec itself is small: site and endpoint).
 */
import type { KubeObject } from '../../api/meta/types.ts';
import type { Node } from '../../api/v1alpha1/generated/node.ts';

const SEQ = 'bench.meshctl.dev/seq';

/** The name of the i-th benchmark object (zero-padded so names sort as numbers). */
export function objectName(i: number, prefix = 'node'): string {
  return `${prefix}-${String(i).padStart(5, '0')}`;
}

/** A valid Node whose JSON is about 1.1 KiB. */
export function makeNodeObject(i: number, prefix = 'node'): Node {
  const annotations = Object.fromEntries(
    Array.from({ length: 12 }, (_, k) => [`note-${k}.bench.meshctl.dev`, `value-${k}-${'x'.repeat(48)}`]),
  );
  return {
    apiVersion: 'meshctl.dev/v1alpha1',
    kind: 'Node',
    metadata: { name: objectName(i, prefix), labels: { site: `site-${i % 7}`, [SEQ]: '0' }, annotations },
    spec: { site: `site-${i % 7}`, endpoint: `203.0.113.${i % 250}:51820` },
  };
}

/** The change a benchmark update makes: bumps a counter label (so the object's JSON changes). */
export function mutate(obj: KubeObject): KubeObject {
  const labels = { ...(obj.metadata.labels ?? {}) };
  labels[SEQ] = String(Number(labels[SEQ] ?? '0') + 1);
  return { ...obj, metadata: { ...obj.metadata, labels } };
}
