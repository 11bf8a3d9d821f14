/**
 * The key authorizations of pending ACME HTTP-01 challenges, in memory only: the Certificate controller sets
 * one while its order is pending and deletes it once the CA has validated; the node that serves the
 * certificate fetches it (`GET certificates/<name>/acme-challenge/<token>`, certificate-endpoints.ts) to answer
 * the CA on its plain-HTTP port. Nothing here outlives an order, so nothing is stored.
 */

/** Pending HTTP-01 challenges by Certificate name and token. */
export class AcmeChallenges {
  private readonly byCert = new Map<string, Map<string, string>>();

  /** Records the key authorization of `token` for Certificate `name`. */
  set(name: string, token: string, keyAuthorization: string): void {
    let m = this.byCert.get(name);
    if (!m) this.byCert.set(name, (m = new Map()));
    m.set(token, keyAuthorization);
  }

  /** The key authorization of `token` for Certificate `name`, or undefined when no such challenge is pending. */
  get(name: string, token: string): string | undefined {
    return this.byCert.get(name)?.get(token);
  }

  /** Forgets one challenge (its order is done). */
  delete(name: string, token: string): void {
    const m = this.byCert.get(name);
    m?.delete(token);
    if (m?.size === 0) this.byCert.delete(name);
  }

  /** How many challenges are pending (for logs and tests). */
  get size(): number {
    let n = 0;
    for (const m of this.byCert.values()) n += m.size;
    return n;
  }
}
