/**
 * The recovery deadline as the status views show it (`meshctl status`, the control plane's status page): the
 * Mesh's status.recoveryDeadline and what set it, else the earliest Certificate notAfter known — one function
 * so that both say the same.
 */
import type { Certificate, Mesh } from './generated/index.ts';

/** The deadline (ISO time, when there is one) and, in words, what sets it. */
export function recoveryDeadlineOf(
  mesh: Mesh | undefined,
  certificates: Certificate[],
): { deadline?: string; setBy: string } {
  const d = mesh?.status?.recoveryDeadline;
  const by = mesh?.status?.recoveryDeadlineSetBy;
  if (d) return { deadline: d, setBy: by ? `${by.kind} ${by.name}${by.node ? ` on ${by.node}` : ''}` : 'Mesh.status' };
  const first = certificates
    .filter((c) => c.status?.notAfter)
    .sort((a, b) => Date.parse(a.status!.notAfter!) - Date.parse(b.status!.notAfter!))[0];
  return first
    ? { deadline: first.status!.notAfter, setBy: `certificate ${first.metadata.name} (Mesh.status not filled)` }
    : { setBy: 'no certificate with a notAfter' };
}
