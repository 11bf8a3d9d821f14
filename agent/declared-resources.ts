/**
 * Turns a stored Declaration into the engine's resources: `File.contentFrom` resolved to content where
 * the agent holds that material (serve/material-sync.ts keeps it in the agent's store); everything else
 * (`dependsOn` included) as declared. Material not held yet (the Certificate is not issued, or the agent
 * has not fetched it) leaves the File unresolved: its driver fails it with a clear message (and the
 * resources that depend on it report DependencyFailed) rather than writing an empty file.
 */
import type { Declaration, DeclaredResource } from '../api/v1alpha1/generated/declaration.ts';
import type { FileSpec } from '../api/v1alpha1/generated/host-resource.ts';

/** Resolves `contentFrom` of a File to its content, or undefined when the agent does not hold it. */
export type ContentResolver = (source: NonNullable<FileSpec['contentFrom']>) => string | undefined;

/** The engine's resources for a declaration, in declaration order. */
export function declaredResources(decl: Declaration, resolve?: ContentResolver): DeclaredResource[] {
  return decl.spec.resources.map((r): DeclaredResource => {
    if (r.kind === 'File' && r.spec.contentFrom !== undefined && r.spec.content === undefined) {
      const content = resolve?.(r.spec.contentFrom);
      if (content !== undefined) return { ...r, spec: { ...r.spec, content } };
    }
    return r;
  });
}
