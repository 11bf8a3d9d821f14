/**
 * Reads one HTTP/1.1 answer from the bytes of a connection, as they arrive (RFC 9112): the status line and headers,
 * then a body delimited by Content-Length, by chunked transfer coding (chunk extensions and trailers are skipped) or
 * by the end of the connection. Informational (1xx) answers before the real one are skipped. Used by http1.ts.
 */

/** A whole answer. */
export interface Http1Answer {
  statusCode: number;
  /** Header values by lower-case name, in the order received (a repeated header has several). */
  headers: Record<string, string[]>;
  /** The body, decoded as UTF-8. */
  body: string;
  /** True when the connection may carry the next request (HTTP/1.1, no `Connection: close`, body delimited). */
  keepAlive: boolean;
}

/** Fed a connection's bytes; `push` and `end` resolve the answer once it is complete. */
export interface AnswerParser {
  /** Takes the next bytes; returns the answer when they complete it. Throws on a malformed answer. */
  push(chunk: Buffer): Http1Answer | undefined;
  /** The connection ended: returns the answer when its body runs until the end, else undefined (incomplete). */
  end(): Http1Answer | undefined;
  /** True once any byte arrived. */
  started(): boolean;
}

/** The most bytes of status line and headers accepted (Node's own limit is 16 KiB). */
const MAX_HEAD_BYTES = 64 * 1024;
const EMPTY: Buffer = Buffer.alloc(0);

interface Head {
  statusCode: number;
  headers: Record<string, string[]>;
  http11: boolean;
}

type Framing = 'none' | 'length' | 'chunked' | 'close';

/** A parser for the answer to a request with the given method (the answer to HEAD has no body). */
export function parseAnswer(method: string): AnswerParser {
  let pending: Buffer = EMPTY;
  let got = false;
  let head: Head | undefined;
  let framing: Framing = 'none';
  let remaining = 0;
  let chunkStep: 'size' | 'data' | 'crlf' | 'trailers' = 'size';
  const body: Buffer[] = [];

  const finish = (keepAlive: boolean): Http1Answer => ({
    statusCode: head!.statusCode,
    headers: head!.headers,
    body: Buffer.concat(body).toString('utf8'),
    keepAlive: keepAlive && head!.http11 && !closes(head!.headers) && pending.length === 0,
  });
  /** Moves up to `remaining` bytes of `pending` into the body. */
  const take = (): void => {
    const n = Math.min(remaining, pending.length);
    body.push(pending.subarray(0, n));
    pending = pending.subarray(n);
    remaining -= n;
  };
  /** Advances through chunked framing; true when the last chunk and trailers were read. */
  const chunked = (): boolean => {
    for (;;) {
      if (chunkStep === 'data') {
        take();
        if (remaining > 0) return false;
        chunkStep = 'crlf';
      }
      if (chunkStep === 'crlf') {
        if (pending.length < 2) return false;
        if (pending[0] !== 13 || pending[1] !== 10) throw new Error('malformed chunked body: no CRLF after a chunk');
        pending = pending.subarray(2);
        chunkStep = 'size';
      }
      const eol = pending.indexOf('\r\n');
      if (eol < 0) {
        if (pending.length > MAX_HEAD_BYTES) throw new Error('malformed chunked body: chunk size line too long');
        return false;
      }
      const line = pending.subarray(0, eol).toString('latin1');
      pending = pending.subarray(eol + 2);
      if (chunkStep === 'trailers') {
        if (line === '') return true;
        continue;
      }
      remaining = chunkSize(line);
      chunkStep = remaining === 0 ? 'trailers' : 'data';
    }
  };

  return {
    push(chunk) {
      got = true;
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (!head) {
        const end = pending.indexOf('\r\n\r\n');
        if (end < 0) {
          if (pending.length > MAX_HEAD_BYTES) throw new Error(`answer headers longer than ${MAX_HEAD_BYTES} bytes`);
          return undefined;
        }
        const h = parseHead(pending.subarray(0, end).toString('latin1'));
        pending = pending.subarray(end + 4);
        if (h.statusCode >= 200 || h.statusCode === 101) {
          head = h;
          [framing, remaining] = framingOf(h, method);
        }
      }
      if (framing === 'none') return finish(true);
      if (framing === 'close') {
        body.push(pending);
        pending = EMPTY;
        return undefined;
      }
      if (framing === 'length') {
        take();
        return remaining === 0 ? finish(true) : undefined;
      }
      return chunked() ? finish(true) : undefined;
    },
    end: () => (head && framing === 'close' ? finish(false) : undefined),
    started: () => got,
  };
}

/** Parses the status line and header lines. */
function parseHead(text: string): Head {
  const lines = text.split('\r\n');
  const m = /^HTTP\/1\.([01]) (\d{3})(?: .*)?$/.exec(lines[0] ?? '');
  if (!m) throw new Error(`malformed answer: status line ${JSON.stringify((lines[0] ?? '').slice(0, 80))}`);
  const headers: Record<string, string[]> = {};
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`malformed answer: header line ${JSON.stringify(line.slice(0, 80))}`);
    (headers[line.slice(0, colon).trim().toLowerCase()] ??= []).push(line.slice(colon + 1).trim());
  }
  return { statusCode: Number(m[2]), headers, http11: m[1] === '1' };
}

/** How the body is delimited, and its length when given. */
function framingOf(h: Head, method: string): [Framing, number] {
  if (method === 'HEAD' || h.statusCode === 204 || h.statusCode === 304) return ['none', 0];
  const te = h.headers['transfer-encoding'];
  if (te) {
    if (/(?:^|,)\s*chunked\s*$/i.test(te.join(','))) return ['chunked', 0];
    return ['close', 0];
  }
  const cl = h.headers['content-length'];
  if (!cl) return ['close', 0];
  const values = new Set(
    cl
      .join(',')
      .split(',')
      .map((v) => v.trim()),
  );
  const [only] = values;
  if (values.size !== 1 || !/^\d+$/.test(only)) throw new Error(`malformed answer: Content-Length ${cl.join(', ')}`);
  const n = Number(only);
  return n === 0 ? ['none', 0] : ['length', n];
}

/** The size of a chunk from its size line (extensions after `;` are ignored). */
function chunkSize(line: string): number {
  const hex = line.split(';')[0].trim();
  if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) throw new Error(`malformed chunked body: chunk size ${JSON.stringify(line)}`);
  return parseInt(hex, 16);
}

function closes(headers: Record<string, string[]>): boolean {
  return (headers.connection ?? []).some((v) => /(?:^|,)\s*close\s*(?:,|$)/i.test(v));
}
