/**
 * The one-time sign-in links `meshctl dashboard` prints: a random code, kept here only as its SHA-256 with
 * an expiry (default 2 minutes), good for one exchange for a session cookie. A second use, an unknown code and
 * an expired code are all refused, each with its own message. Codes live in memory: a restart of the control
 * plane forgets them (make a new link).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../../meta/clock.ts';

/** How long a link is good for by default. */
export const LINK_TTL_MS = 120_000;
/** Codes remembered as used or expired (so a second use is told so), at most. */
const MAX_REMEMBERED = 1000;

/** Why a code was refused, or undefined when it was accepted. */
export type CodeRefusal = 'used' | 'expired' | 'unknown';

/** The one-time codes of sign-in links. */
export class SignInLinks {
  private readonly codes = new Map<string, { expires: number; used: boolean }>();
  private readonly ttlMs: number;

  constructor(
    private readonly clock: Clock,
    ttlMs = LINK_TTL_MS,
  ) {
    this.ttlMs = ttlMs;
  }

  /** A new code and when it expires. */
  create(): { code: string; expires: number } {
    this.prune();
    const code = randomBytes(24).toString('base64url');
    const expires = this.clock.now() + this.ttlMs;
    this.codes.set(hash(code), { expires, used: false });
    return { code, expires };
  }

  /** Uses `code` up: undefined when it was good (it is not good again), else why it was refused. */
  redeem(code: string): CodeRefusal | undefined {
    const entry = this.codes.get(hash(code));
    if (!entry) return 'unknown';
    if (entry.used) return 'used';
    if (entry.expires <= this.clock.now()) return 'expired';
    entry.used = true;
    return undefined;
  }

  /** Forgets the oldest entries beyond the bound (used and expired ones are kept to word a refusal). */
  private prune(): void {
    for (const key of this.codes.keys()) {
      if (this.codes.size < MAX_REMEMBERED) break;
      this.codes.delete(key);
    }
  }
}

function hash(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}
