/**
 * Turns a stored Declaration into the engine's resources: the schema's defaults the drivers rely on
 * (`Service.spec.driver` defaults to `process`), and `File.contentFrom` resolved to content where the
 * agent holds that material. Certificate material arrives with a later issue: until then such a File
 * is handed on unresolved and its driver fails it with a clear message (and its owner's later
 * resources report DependencyFailed), rather than writing an empty file.
 */
import type { Declaration } from '../api/v1alpha1/generated/declaration.ts';
import type { FileSpec, Resource, ServiceSpec } from './engine/types.ts';

/** Resolves `contentFrom` of a File to its content, or undefined when the agent does not hold it. */
export type ContentResolver = (source: NonNullable<FileSpec['contentFrom']>) => string | undefined;

/** The engine's resources for a declaration, in declaration order. */
export function declaredResources(decl: Declaration, resolve?: ContentResolver): Resource[] {
  return decl.spec.resources.map((r): Resource => {
    const base = { id: r.id, owner: r.owner, kind: r.kind };
    if (r.kind === 'Service') {
      const spec: ServiceSpec = { ...r.spec, driver: r.spec.driver ?? 'process' } as ServiceSpec;
      return { ...base, spec };
    }
    if (r.kind === 'File' && r.spec.contentFrom !== undefined && r.spec.content === undefined) {
      const content = resolve?.(r.spec.contentFrom);
      if (content !== undefined) return { ...base, spec: { ...r.spec, content } };
    }
    return { ...base, spec: r.spec };
  });
}
