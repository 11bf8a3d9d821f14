/**
 * Writes responses: JSON bodies and `Status` errors. Every error leaves the server as a Kubernetes `Status`;
 * anything that is not an ApiError becomes a generic 500 whose stack goes to the log, never to the client.
 */
import type { ServerResponse } from 'node:http';
import { ApiError } from '../../meta/api-error.ts';
import type { Logger } from '../../meta/logger.ts';
import { valueSink } from '../in-process-values.ts';
import { deepFreeze, jsonText } from '../../meta/frozen.ts';

/**
 * Sends `body` as JSON with the given HTTP code (no-op when the response was already sent). A 2xx answer to a
 * client in this process is handed over as the (frozen) object itself (in-process-values.ts).
 */
export function sendJson(res: ServerResponse, code: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const sink = code >= 200 && code < 300 ? valueSink(res) : undefined;
  if (sink) return sink.sendValue(code, deepFreeze(body), headers);
  const text = jsonText(body);
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Sends an already serialized JSON body (documents built once, such as the OpenAPI ones). */
export function sendRaw(res: ServerResponse, code: number, json: string, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(code, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json), ...headers });
  res.end(json);
}

/** Sends plain text (health endpoints). */
export function sendText(res: ServerResponse, code: number, text: string): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(code, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

/** Converts anything thrown while serving into an ApiError; unexpected errors are logged with their stack. */
export function toApiError(e: unknown, logger: Logger, where: Record<string, unknown> = {}): ApiError {
  if (e instanceof ApiError) return e;
  const err = e instanceof Error ? e : new Error(String(e));
  logger.error('Failed request with an internal error', { ...where, error: err.message, stack: err.stack });
  return new ApiError({
    reason: 'InternalError',
    message: 'Internal error occurred: the server could not handle the request (see the server log)',
  });
}

/** Sends an error as a `Status` object with its HTTP code (and `Retry-After` when the Status says when). */
export function sendError(res: ServerResponse, e: unknown, logger: Logger, where: Record<string, unknown> = {}): void {
  const err = toApiError(e, logger, where);
  const retry = err.details?.retryAfterSeconds;
  sendJson(res, err.code, err.toStatus(), retry !== undefined ? { 'Retry-After': String(retry) } : {});
}

/** Fails with 405 (and an `Allow` header) unless `method` is one of `allowed`. */
export function requireMethod(res: ServerResponse, method: string, allowed: string[]): void {
  if (allowed.includes(method)) return;
  res.setHeader('Allow', allowed.join(', '));
  throw new ApiError({
    reason: 'MethodNotAllowed',
    message: `the server does not allow method ${method} here; allowed: ${allowed.join(', ')}`,
  });
}
