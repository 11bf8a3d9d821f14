/**
 * The non-table printers of `get`: `-o yaml`, `-o json` and `-o name`. One object prints as itself,
 * several as a `List`, like kubectl. The YAML library is loaded only when YAML is printed.
 */
import type { KubeObject } from '../../api/meta/types.ts';
import { yaml } from '../yaml.ts';

/** Output formats other than the table. */
export type ObjectFormat = 'yaml' | 'json' | 'name';

/** Renders objects as YAML, JSON or `kind/name` lines; `single` prints one object rather than a List. */
export async function renderObjects(
  objects: KubeObject[],
  format: ObjectFormat,
  opts: { single: boolean; singular: (o: KubeObject) => string },
): Promise<string> {
  if (format === 'name') return objects.map((o) => `${opts.singular(o)}/${o.metadata?.name ?? ''}\n`).join('');
  const value = opts.single && objects.length === 1 ? objects[0] : asList(objects);
  return format === 'json' ? toJson(value) : toYaml(value);
}

/** A kubectl-style `List` of objects. */
export function asList(objects: KubeObject[]): {
  apiVersion: 'v1';
  kind: 'List';
  items: KubeObject[];
  metadata: { resourceVersion: string };
} {
  return { apiVersion: 'v1', kind: 'List', items: objects, metadata: { resourceVersion: '' } };
}

/** JSON with four-space indentation, as kubectl prints it. */
export function toJson(value: unknown): string {
  return JSON.stringify(value, null, 4) + '\n';
}

/**
 * YAML without line folding (long strings stay on one line). Written for YAML 1.1 readers too, as kubectl
 * does: strings such as timestamps, `yes` or `on` are quoted so that no parser reads them as other types.
 */
export async function toYaml(value: unknown): Promise<string> {
  return yaml().stringify(value, { lineWidth: 0, aliasDuplicateObjects: false, version: '1.1' });
}
