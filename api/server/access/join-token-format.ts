/**
 * Join tokens, kubeadm-style: `<id>.<secret>` with a 6-character id (the JoinToken object's name) and a
 * 16-character secret, both `[a-z0-9]`. Only the SHA-256 of the whole token is stored (Secret
 * `jointoken.<id>`); the token itself is shown once, when it is created. Also the Go-style durations of
 * `spec.ttl` (`24h`, `90m`, `1h30m`, `10s`).
 */
import { randomInt } from 'node:crypto';
import { ApiError } from '../../meta/api-error.ts';

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

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** Parses a Go duration (`24h`, `1h30m`, `90s`, `500ms`, `0`) into milliseconds; throws ApiError BadRequest. */
export function parseGoDuration(text: string): number {
  if (text === '0') return 0;
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g)];
  if (!parts.length || parts.map((p) => p[0]).join('') !== text) {
    throw ApiError.badRequest(`invalid duration "${text}": expected e.g. 24h, 90m, 1h30m or 10s`);
  }
  return parts.reduce((ms, p) => ms + Number(p[1]) * UNIT_MS[p[2]!]!, 0);
}
