/**
 * The status page's sign-in session: a cookie value `v1.<expiry ms>.<HMAC>` signed with a key kept in the
 * control plane's data dir (`ui-session.key`, 0600), so a session survives a restart of the control plane and
 * the page reconnects by itself. The HMAC also covers the admin token's hash: rotating the admin token ends
 * every session. Nothing is stored per session; a value is valid while its signature matches and it has not
 * expired. The cookie grants the admin's reads only (ui-access.ts).
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../../meta/atomic-file.ts';
import type { Clock } from '../../meta/clock.ts';

/** The cookie's name. */
export const SESSION_COOKIE = 'meshctl-ui';
/** How long a session lasts by default: 12 hours. */
export const SESSION_TTL_MS = 12 * 3_600_000;

/** Options of `UiSessions`. */
export interface UiSessionsOptions {
  /** The HMAC key (32 bytes); `loadSessionKey` reads or creates it in the data dir. */
  key: Buffer;
  /** Hex SHA-256 of the admin token now (a function so that a rotated token takes effect at once). */
  adminTokenSha256: () => string;
  clock: Clock;
  ttlMs?: number;
}

/** Issues and checks session cookie values. */
export class UiSessions {
  readonly ttlMs: number;
  constructor(private readonly opts: UiSessionsOptions) {
    this.ttlMs = opts.ttlMs ?? SESSION_TTL_MS;
  }

  /** A new session value and when it expires. */
  issue(): { value: string; expires: number } {
    const expires = this.opts.clock.now() + this.ttlMs;
    return { value: `v1.${expires}.${this.mac(expires)}`, expires };
  }

  /** True when `value` was issued by `issue()` with this key and admin token, and has not expired. */
  valid(value: string | undefined): boolean {
    const m = /^v1\.(\d{1,15})\.([\w-]{43})$/.exec(value ?? '');
    if (!m) return false;
    const expires = Number(m[1]);
    if (expires <= this.opts.clock.now()) return false;
    const expected = Buffer.from(this.mac(expires));
    const presented = Buffer.from(m[2]);
    return expected.length === presented.length && timingSafeEqual(expected, presented);
  }

  /** The `Set-Cookie` header that stores `value` (HttpOnly, Secure, SameSite=Strict, for the whole origin). */
  setCookie(value: string, expires: number): string {
    const maxAge = Math.max(0, Math.floor((expires - this.opts.clock.now()) / 1000));
    return `${SESSION_COOKIE}=${value}; Path=/; Max-Age=${maxAge}; HttpOnly; Secure; SameSite=Strict`;
  }

  private mac(expires: number): string {
    return createHmac('sha256', this.opts.key)
      .update(`v1.${expires}.${this.opts.adminTokenSha256()}`)
      .digest('base64url');
  }
}

/** The `Set-Cookie` header that removes the session cookie (sign-out). */
export function clearCookie(): string {
  return `${SESSION_COOKIE}=; Path=/; Max-Age=0; HttpOnly; Secure; SameSite=Strict`;
}

/** The session cookie's value in a `Cookie` header, or undefined. */
export function sessionCookie(header: string | undefined): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === SESSION_COOKIE) return v.join('=');
  }
  return undefined;
}

/** The session key in `dataDir/ui-session.key`: read, or created (32 random bytes, mode 0600) on first use. */
export function loadSessionKey(dataDir: string): Buffer {
  const path = join(dataDir, 'ui-session.key');
  if (existsSync(path)) {
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'hex');
    if (key.length !== 32) throw new Error(`${path} is not a 32-byte hex key; remove it to make a new one`);
    return key;
  }
  const key = randomBytes(32);
  writeFileAtomicSync(path, key.toString('hex') + '\n', { mode: 0o600 });
  return key;
}
