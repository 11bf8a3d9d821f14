/**
 * The names the API server's certificate must carry for a listen address: loopback names always, the
 * machine's host name, the listen address itself, and every non-internal interface address when
 * listening on a wildcard address. Also the URL a local admin uses for that address.
 */
import { isIP } from 'node:net';
import { hostname, networkInterfaces } from 'node:os';
import { normalizeIp } from './pki.ts';
import { formatHostPort } from '../../meta/host-port.ts';

/** Subject alternative names for a serving certificate. */
export interface ServingNames {
  dnsNames: string[];
  ipAddresses: string[];
}

const DNS_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

/** True for 0.0.0.0, :: and the empty host (every address). */
export function isWildcard(host: string): boolean {
  return host === '' || host === '0.0.0.0' || host === '::' || host === '[::]';
}

/** True for 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  return isIP(h) === 6 && normalizeIp(h) === '::1';
}

/** The SANs a serving certificate needs for `listenHost`. */
export function servingNames(listenHost: string): ServingNames {
  const dns = new Set(['localhost']);
  const ips = new Set(['127.0.0.1', '::1']);
  const host = hostname().toLowerCase();
  if (DNS_NAME.test(host)) dns.add(host);
  const listen = listenHost.replace(/^\[|\]$/g, '');
  if (isWildcard(listen)) {
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? [])
        if (!a.internal && !(a.family === 'IPv6' && a.scopeid)) ips.add(normalizeIp(a.address));
    }
  } else if (isIP(listen)) {
    ips.add(normalizeIp(listen));
  } else if (DNS_NAME.test(listen.toLowerCase())) {
    dns.add(listen.toLowerCase());
  }
  return { dnsNames: [...dns], ipAddresses: [...ips] };
}

/** The URL a local admin reaches the server at (a wildcard listen address becomes loopback). */
export function serverUrl(listenHost: string, port: number, insecureHttp: boolean): string {
  let host = listenHost.replace(/^\[|\]$/g, '');
  if (host === '' || host === '0.0.0.0') host = '127.0.0.1';
  if (host === '::') host = '::1';
  return `${insecureHttp ? 'http' : 'https'}://${formatHostPort(host, port)}`;
}
