/**
 * Warnings of a write that is accepted but probably not what was meant, sent as kube-apiserver sends them:
 * one `Warning: 299 - "<text>"` response header each (RFC 7234), which kubectl and meshctl print to stderr
 * as `Warning: <text>`. The write itself goes on: an Assignment may name a Node that joins later.
 */
import type { ServerResponse } from 'node:http';
import type { KubeObject } from '../../meta/types.ts';
import type { Store } from '../../store/types.ts';

/** What is worth a warning about `obj` as stored: an Assignment to a Node that does not exist. */
export function admissionWarnings(obj: KubeObject, store: Pick<Store, 'get'>): string[] {
  if (obj.kind !== 'Assignment') return [];
  const node = (obj.spec as { node?: unknown } | undefined)?.node;
  if (typeof node !== 'string' || store.get('nodes', node)) return [];
  return [
    `spec.node: node "${node}" does not exist; assignment "${obj.metadata.name ?? ''}" stays Applied=False (NodeNotFound) until a node of that name joins`,
  ];
}

/** The `Warning` header value of one text: code 299, agent `-`, the text quoted (RFC 7234 section 5.5). */
export function warningHeader(text: string): string {
  const ascii = text.replace(/[^\x20-\x7e]/g, '?');
  return `299 - ${JSON.stringify(ascii)}`;
}

/** Sets the warnings of a write on its response (nothing when there are none). */
export function setWarnings(res: ServerResponse, warnings: string[]): void {
  if (warnings.length && !res.headersSent) res.setHeader('Warning', warnings.map(warningHeader));
}
