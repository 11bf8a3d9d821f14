/**
 * The backup archive container: a small documented format written and read with node:crypto only, so that
 * `meshctl backup verify` needs nothing but this file to re-check an archive offline.
 *
 *   meshctl-backup 1\n                                                  the magic line and format version
 *   {"member":"manifest.json","bytes":N,"sha256":"<hex>"}\n<N bytes>\n   one header line, then the bytes, per member
 *   {"member":"store/snapshot.jsonl",...}\n<bytes>\n                     ... (manifest.json always first)
 *   {"end":true,"members":K,"sha256":"<hex>"}\n                          the trailer: SHA-256 of everything before it
 *
 * The manifest (manifest.ts) lists every other member with its size and SHA-256, so a member swapped in from
 * another archive (with a header that matches it) is still found; the trailer catches any change elsewhere,
 * including a cut. Every failure is a BackupError naming what failed.
 */
import { createHash } from 'node:crypto';

/** The first line of every archive. */
export const MAGIC = 'meshctl-backup';
/** The container version this code writes and reads. */
export const ARCHIVE_VERSION = 1;

/** A refusal of an archive (or of a backup or restore step), with the reason people read. */
export class BackupError extends Error {
  override name = 'BackupError';
}

/** One named member of an archive. */
export interface Member {
  name: string;
  data: Buffer;
}

/** SHA-256 of bytes, lowercase hex. */
export function sha256(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Encodes members (manifest.json first) into one archive. */
export function encodeArchive(members: Member[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`${MAGIC} ${ARCHIVE_VERSION}\n`)];
  for (const m of members) {
    const header = { member: m.name, bytes: m.data.length, sha256: sha256(m.data) };
    parts.push(Buffer.from(JSON.stringify(header) + '\n'), m.data, Buffer.from('\n'));
  }
  const body = Buffer.concat(parts);
  const trailer = { end: true, members: members.length, sha256: sha256(body) };
  return Buffer.concat([body, Buffer.from(JSON.stringify(trailer) + '\n')]);
}

/** Reads one `\n`-terminated line at `at`; throws (truncated) when there is no newline. */
function lineAt(buf: Buffer, at: number, what: string): { text: string; next: number } {
  const nl = buf.indexOf(0x0a, at);
  if (nl < 0) throw new BackupError(`truncated archive: ${what} is cut off at byte ${at} of ${buf.length}`);
  return { text: buf.subarray(at, nl).toString('utf8'), next: nl + 1 };
}

function parseHeader(text: string, at: number): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) return v as Record<string, unknown>;
  } catch {
    /* reported below */
  }
  throw new BackupError(`corrupt archive: the member header at byte ${at} is not a JSON object`);
}

/** Checks the magic line and format version; returns where the first member starts. */
function checkMagic(buf: Buffer): number {
  const nl = buf.indexOf(0x0a);
  const first = buf.subarray(0, nl < 0 ? Math.min(buf.length, 40) : nl).toString('utf8');
  const m = /^meshctl-backup (\d+)$/.exec(first);
  if (!m) throw new BackupError(`not a meshctl backup archive (it starts with ${JSON.stringify(first.slice(0, 40))})`);
  if (Number(m[1]) !== ARCHIVE_VERSION)
    throw new BackupError(`archive format version ${m[1]} is not supported (this meshctl reads ${ARCHIVE_VERSION})`);
  return nl + 1;
}

/**
 * Decodes an archive, checking the magic, each member's SHA-256 against its header and the trailer's SHA-256
 * of the whole; throws a BackupError naming the first thing that failed.
 */
export function decodeArchive(buf: Buffer): Member[] {
  let at = checkMagic(buf);
  const members: Member[] = [];
  for (;;) {
    const line = lineAt(
      buf,
      at,
      members.length ? `the header after member ${members.at(-1)?.name}` : 'the first header',
    );
    const h = parseHeader(line.text, at);
    if (h.end === true) return checkTrailer(buf, at, h, members);
    if (typeof h.member !== 'string' || !Number.isSafeInteger(h.bytes) || typeof h.sha256 !== 'string')
      throw new BackupError(`corrupt archive: the member header at byte ${at} lacks member, bytes or sha256`);
    const end = line.next + (h.bytes as number);
    if (end + 1 > buf.length)
      throw new BackupError(
        `truncated archive: member ${h.member} declares ${String(h.bytes)} bytes, ${Math.max(0, buf.length - line.next)} are left`,
      );
    const data = buf.subarray(line.next, end);
    if (sha256(data) !== h.sha256 || buf[end] !== 0x0a)
      throw new BackupError(`corrupt archive: member ${h.member} does not match its SHA-256 (damaged or changed)`);
    members.push({ name: h.member, data });
    at = end + 1;
  }
}

function checkTrailer(buf: Buffer, at: number, h: Record<string, unknown>, members: Member[]): Member[] {
  if (h.members !== members.length)
    throw new BackupError(`corrupt archive: the trailer counts ${String(h.members)} members, found ${members.length}`);
  if (h.sha256 !== sha256(buf.subarray(0, at)))
    throw new BackupError('corrupt archive: the SHA-256 of the whole archive does not match its trailer (changed)');
  if (lineAt(buf, at, 'the trailer').next !== buf.length)
    throw new BackupError('corrupt archive: bytes follow the trailer');
  return members;
}
