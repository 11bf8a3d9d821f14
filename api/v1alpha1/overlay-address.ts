/**
 * Overlay address allocation (IPv4): pure functions, no I/O. The control plane's overlay controller
 * (controllers/overlay-controller.ts) keeps what it allocates in Node.status.overlay.address, so an address
 * stays with its node across restarts and is never handed to another node while that node exists.
 */

/** The range overlay addresses come from when the Mesh names none (ADR 0050: 100.64.0.0/10). */
export const DEFAULT_OVERLAY_CIDR = '100.64.0.0/10';

/** An IPv4 range: its first address as a number and its prefix length. */
export interface Ipv4Range {
  base: number;
  prefix: number;
}

/** An IPv4 dotted quad as a 32-bit unsigned number, or undefined when it is not one. */
export function ipv4ToNumber(ip: string): number | undefined {
  const parts = ip.split('.');
  if (parts.length !== 4) return undefined;
  let n = 0;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    n = n * 256 + Number(p);
  }
  return n;
}

/** A 32-bit unsigned number as an IPv4 dotted quad. */
export function numberToIpv4(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** Parses `a.b.c.d/len` (the base is masked to the prefix); undefined for anything else, IPv6 included. */
export function parseIpv4Cidr(cidr: string): Ipv4Range | undefined {
  const [ip, len, extra] = cidr.split('/');
  const base = ipv4ToNumber(ip ?? '');
  const prefix = Number(len);
  if (extra !== undefined || base === undefined || !/^\d{1,2}$/.test(len ?? '') || prefix > 32) return undefined;
  const size = 2 ** (32 - prefix);
  return { base: base - (base % size), prefix };
}

/** Whether `ip` lies inside `range`. */
export function inRange(ip: string, range: Ipv4Range): boolean {
  const n = ipv4ToNumber(ip);
  return n !== undefined && n >= range.base && n < range.base + 2 ** (32 - range.prefix);
}

/**
 * The first host address of `cidr` after `after` not in `used`, wrapping around to the lowest (from the lowest
 * when `after` is absent or outside the range); the network and broadcast addresses are never given out, below
 * /31. Undefined when the range is full or not an IPv4 CIDR. An allocator that passes the address it gave out
 * last looks at about one address per allocation, not at every address in use (N nodes: N, not N²/2, lookups).
 */
export function allocateAddress(
  cidr: string,
  used: Pick<ReadonlySet<string>, 'has'>,
  after?: string,
): string | undefined {
  const range = parseIpv4Cidr(cidr);
  if (!range) return undefined;
  const size = 2 ** (32 - range.prefix);
  const first = size > 2 ? 1 : 0;
  const last = size > 2 ? size - 2 : size - 1;
  const prev = after === undefined ? undefined : ipv4ToNumber(after);
  const start =
    prev !== undefined && inRange(after!, range) && prev - range.base < last ? prev - range.base + 1 : first;
  for (let k = 0; k <= last - first; k++) {
    const i = start + k > last ? start + k - (last - first + 1) : start + k;
    const ip = numberToIpv4(range.base + i);
    if (!used.has(ip)) return ip;
  }
  return undefined;
}
