/**
 * The recovery clock (DESIGN.md, ADR 0053): how long the control plane may stay down. Everything with an
 * expiry that only the control plane can renew — the Certificates it issues, its own serving certificate, the
 * mesh CA, node credentials if they expire — is an `Expiring`; the **recovery deadline** is the earliest
 * `notAfter` among them and the **outage budget** is deadline − now (negative once passed). Pure, on an
 * injected `now`, so the control plane (Mesh.status), the agent (from the certificates it holds) and
 * `meshctl status` compute it the same way.
 */

/** What kind of thing expires: an issued Certificate, the control plane's serving certificate, the mesh CA, a node credential. */
export type ExpiringKind = 'Certificate' | 'ServingCertificate' | 'CertificateAuthority' | 'NodeCredential';

/** One thing that needs the control plane before its `notAfter`. */
export interface Expiring {
  kind: ExpiringKind;
  /** Its name (a Certificate's name; `serving`, `ca`, a node's name). */
  name: string;
  /** The node that holds it, when one does. */
  node?: string;
  /** End of validity, ms since the epoch. */
  notAfter: number;
}

/** The clock at `now`: undefined deadline (and budget) when nothing expires. */
export interface RecoveryClock {
  /** The earliest notAfter, ms since the epoch. */
  deadline?: number;
  /** deadline − now in whole seconds (rounded down; negative once passed). */
  budgetSeconds?: number;
  /** What sets the deadline (the first of the earliest, in input order, when several tie). */
  setBy?: Expiring;
  /** What has already expired (notAfter ≤ now), earliest first. */
  expired: Expiring[];
}

/** Computes the recovery deadline, the outage budget and what sets them; invalid notAfter values are ignored. */
export function recoveryClock(items: readonly Expiring[], now: number): RecoveryClock {
  const valid = items.filter((i) => Number.isFinite(i.notAfter));
  let setBy: Expiring | undefined;
  for (const i of valid) if (!setBy || i.notAfter < setBy.notAfter) setBy = i;
  const expired = valid.filter((i) => i.notAfter <= now).sort((a, b) => a.notAfter - b.notAfter);
  if (!setBy) return { expired };
  return { deadline: setBy.notAfter, budgetSeconds: Math.floor((setBy.notAfter - now) / 1000), setBy, expired };
}

/** The earliest `n` items by notAfter (what `status` commands list as closest to expiry). */
export function closestToExpiry(items: readonly Expiring[], n: number): Expiring[] {
  return [...items].sort((a, b) => a.notAfter - b.notAfter).slice(0, Math.max(0, n));
}
