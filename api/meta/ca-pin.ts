/**
 * The CA pin, kubeadm's discovery hash: `sha256:<hex>` of the DER SubjectPublicKeyInfo of the mesh CA's
 * public key. `meshctl init` and `meshctl token create` print it in the join command; `mesh-agent join`
 * checks the CA that `/cluster-info` returns against it before it sends the token. One function on both
 * sides, with node:crypto only (no X.509 library at meshctl's start-up).
 */
import { createHash, createPublicKey } from 'node:crypto';

/** The pin of a CA certificate (PEM); throws when the PEM holds no readable key. */
export function caPin(caPem: string): string {
  const spki = createPublicKey(caPem).export({ type: 'spki', format: 'der' });
  return `sha256:${createHash('sha256').update(spki).digest('hex')}`;
}
