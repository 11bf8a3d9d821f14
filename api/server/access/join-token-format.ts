/**
 * Join tokens, kubeadm-style: `<id>.<secret>` with a 6-character id (the JoinToken object's name) and a
 * 16-character secret, both `[a-z0-9]`. Only the SHA-256 of the whole token is stored (Secret
 * `jointoken.<id>`); the token itself is shown once, when it is created. Also `spec.ttl`, a Go duration
 * (`24h`, `90m`, `1h30m`, `10s`).
 */
import { randomInt } from 'node:crypto';
import { ApiError } from '../../meta/api-error.ts';
import { parseDuration } from '../../meta/duration.ts';

/** A whole join token. */
export const TOKEN_PATTERN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
/** A token id (the name of its JoinToken). */
export const TOKEN_ID_PATTERN = /^[a-z0-9]{6}$/;
/** The ttl of a JoinToken that does not say. */
export const DEFAULT_TTL = '24h';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomString(length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += ALPHABET[randomInt(ALPHABET.length)];
  return s;
}

/** A fresh random token id (6 characters). */
export function generateTokenId(): string {
  return randomString(6);
}

/** A fresh random token secret (16 characters, about 82 bits). */
export function generateTokenSecret(): string {
  return randomString(16);
}

/** The id of a well-formed token, or undefined. */
export function tokenId(token: string): string | undefined {
  return TOKEN_PATTERN.exec(token)?.[1];
}

/** The longest `spec.ttl`: ten years (87600h); a longer one would not make an expiry date. */
export const MAX_TTL_MS = 87_600 * 3_600_000;

/** The milliseconds of a `spec.ttl` (`24h`, `1h30m`, `0`); throws ApiError BadRequest naming it. */
export function ttlMs(ttl: string): number {
  let ms: number;
  try {
    ms = parseDuration(ttl, { allowZero: true });
  } catch (e) {
    throw ApiError.badRequest((e as Error).message);
  }
  if (!(ms <= MAX_TTL_MS)) throw ApiError.badRequest(`invalid duration "${ttl.slice(0, 40)}": must be at most 87600h`);
  return ms;
}
