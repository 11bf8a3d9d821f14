/**
 * `HOST:PORT` as every listen flag spells it (`127.0.0.1:6443`, `[::1]:6443`, `localhost:0`, `:6443`): one
 * parser for the control plane's and `meshctl init`'s `--listen` and the agent's `--metrics-listen`. An
 * IPv6 address goes in brackets. Which ports and hosts a flag accepts beyond that is the caller's check.
 * `formatHostPort` writes one back, for URLs.
 */

/** A parsed `HOST:PORT`. */
export interface HostPort {
  host: string;
  port: number;
}

/** Options of `parseHostPort`. */
export interface ParseHostPortOptions {
  /** The host when the text leaves it out (`:6443`, `[]:6443`); without it an empty host is an error. */
  defaultHost?: string;
}

const HOST_PORT = /^(?:\[([^\]]*)\]|([^:[\]]*)):(\d{1,5})$/;

/**
 * Parses `HOST:PORT` (port 0–65535; an IPv6 host in brackets). Throws an Error naming the input, e.g.
 * `expected HOST:PORT such as 127.0.0.1:6443 or [::1]:6443, not "9100"`.
 */
export function parseHostPort(text: string, opts: ParseHostPortOptions = {}): HostPort {
  const m = HOST_PORT.exec(text);
  const port = Number(m?.[3]);
  const host = m ? (m[1] ?? m[2]) || opts.defaultHost : undefined;
  if (!m || port > 65535 || host === undefined) {
    const why = m && port > 65535 ? ': the port must be at most 65535' : m ? ': the host is missing' : '';
    throw new Error(`expected HOST:PORT such as 127.0.0.1:6443 or [::1]:6443, not "${text}"${why}`);
  }
  return { host, port };
}

/** `HOST:PORT` for a URL or a message: an IPv6 host (one with a colon) goes in brackets, `[::1]:6443`. */
export function formatHostPort(host: string, port: number): string {
  return `${host.includes(':') ? `[${host}]` : host}:${port}`;
}
