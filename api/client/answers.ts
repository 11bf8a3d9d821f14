/**
 * What a transport makes of an answer: the JSON body of a 2xx, or the ApiError its status and `Status` body say
 * (errorFromResponse); a `429` sent again after its `Retry-After`; the `Warning` headers passed on. Shared by the
 * HTTP(S) transport (http-transport.ts), the control plane's in-process one (api/server/in-process-transport.ts)
 * and the commands that read a streamed answer themselves (readBody).
 */
import type * as http from 'node:http';
import { ApiError, type StatusReason } from '../meta/api-error.ts';
import { realClock, sleep } from '../meta/clock.ts';
import type { Http1Answer } from './http1.ts';
import type { ClientConfig } from './types.ts';

/**
 * A plain answer: its status, headers (by lower-case name, each a list) and body text; or, from the control
 * plane's in-process transport, a 2xx body as the `value` itself (api/server/in-process-values.ts).
 */
export type PlainAnswer = Pick<Http1Answer, 'statusCode' | 'headers' | 'body'> & { value?: unknown };

/**
 * Resolves with the parsed JSON body of a 2xx answer from `send`, or rejects with its ApiError; passes the answer's
 * warnings on, and sends a `429 TooManyRequests` again after its `Retry-After`, as often as the config allows.
 * Shared by the transports (HTTP(S) here; the control plane's own, api/server/in-process-transport.ts).
 */
export async function jsonAnswer(cfg: ClientConfig, send: () => Promise<PlainAnswer>): Promise<unknown> {
  const once = async (): Promise<PlainAnswer> => {
    const answer = await send();
    if (cfg.onWarning) for (const w of warningTexts(answer.headers.warning)) cfg.onWarning(w);
    return answer;
  };
  let res = await once();
  for (let retries = 0; res.statusCode === 429 && retries < (cfg.maxRetries ?? 10); retries++) {
    // retryJitter spreads the clients a busy server refused at once: each waits 1 to (1 + retryJitter) × Retry-After.
    const jitter = 1 + (cfg.retryJitter ?? 0) * (cfg.random ?? Math.random)();
    await sleep(cfg.clock ?? realClock, retryAfterMs(res.headers['retry-after']?.[0]) * jitter).promise;
    res = await once();
  }
  const text = res.body;
  if (res.statusCode < 200 || res.statusCode >= 300) throw errorFromResponse(res.statusCode, text);
  if ('value' in res) return res.value;
  if (!text.trim()) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new ApiError({
      reason: 'InternalError',
      message: `the server sent a response that is not JSON: ${snippet(text)}`,
    });
  }
}

/** The texts of `Warning` headers (`299 - "text"`, RFC 7234; several may share one header, comma-separated). */
export function warningTexts(headers: readonly string[] | undefined): string[] {
  const out: string[] = [];
  for (const h of headers ?? [])
    for (const m of h.matchAll(/\d{3} \S+ "((?:[^"\\]|\\.)*)"/g)) out.push((m[1] ?? '').replace(/\\(.)/g, '$1'));
  return out;
}

/** The wait a 429's `Retry-After` asks for (delay-seconds; 1 s when absent or a date), at most a minute. */
export function retryAfterMs(header: string | undefined): number {
  const seconds = header !== undefined && /^\d+$/.test(header.trim()) ? Number(header) : 1;
  return Math.min(Math.max(seconds, 1), 60) * 1000;
}

/** Reads a whole response body as UTF-8 text. */
export async function readBody(res: http.IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let text = '';
  for await (const chunk of res) text += chunk as string;
  return text;
}

const REASONS: Record<number, StatusReason> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  405: 'MethodNotAllowed',
  406: 'NotAcceptable',
  409: 'Conflict',
  410: 'Gone',
  413: 'RequestEntityTooLarge',
  415: 'UnsupportedMediaType',
  422: 'Invalid',
  429: 'TooManyRequests',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

/** Builds the ApiError of a non-2xx answer: the server's `Status`, or one made from the code and body. */
export function errorFromResponse(code: number, text: string): ApiError {
  try {
    const s = JSON.parse(text) as { kind?: string };
    if (s && s.kind === 'Status') return ApiError.fromStatus(s as Parameters<typeof ApiError.fromStatus>[0], code);
  } catch {
    // not JSON: fall through
  }
  const reason = REASONS[code] ?? 'InternalError';
  return new ApiError({
    reason,
    code,
    message: `the server responded with HTTP ${code}${text.trim() ? `: ${snippet(text)}` : ''}`,
  });
}

function snippet(text: string): string {
  const t = text.trim().replace(/\s+/g, ' ');
  return t.length > 200 ? t.slice(0, 200) + '…' : t;
}
