/**
 * JSON values handed across the control plane's in-process transport as they are (in-process-transport.ts): a
 * 2xx JSON answer (respond.ts `sendJson`) and each watch event (resources/watch.ts) reach a client in this
 * process as the object the handler holds, not as text it would encode and the client decode again; so does a
 * request's JSON body the other way (`valueBody`; http/body.ts takes a copy of it, as parsing would have made). That object
 * is usually the store's own copy (the object as stored, which the store also hands to every watcher), so it is
 * deep-frozen first: neither side can change what the other holds. Over HTTPS nothing changes: a response
 * without a value sink gets the JSON text as before.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** The key under which an in-process response offers its ValueSink. */
export const VALUE_SINK: unique symbol = Symbol('meshctl.valueSink');

/** Where a response written in process takes values instead of bytes. */
export interface ValueSink {
  /** Answers with `value` (frozen) as the JSON body of a `code` answer with `headers`. */
  sendValue(code: number, value: unknown, headers: Record<string, string>): void;
  /** Called before the head is written by a stream that will write values only (a JSON watch), never bytes. */
  streamValues(): void;
  /** Streams one value (a watch event, frozen); false when the client has enough buffered (wait for `drain`). */
  writeValue(value: unknown): boolean;
}

/** The response's value sink, when it is written for a client in this process; undefined over HTTP(S). */
export function valueSink(res: ServerResponse): ValueSink | undefined {
  return (res as ServerResponse & { [VALUE_SINK]?: ValueSink })[VALUE_SINK];
}

/** The key under which an in-process request carries its JSON body as a value (instead of bytes). */
export const VALUE_BODY: unique symbol = Symbol('meshctl.valueBody');

/** A request whose JSON body a client in this process handed over as a value. */
export type ValueRequest = IncomingMessage & { [VALUE_BODY]?: { v: unknown } };

/** The JSON body a client in this process sent as a value (the client's own object: copy it); undefined otherwise. */
export function valueBody(req: IncomingMessage): { v: unknown } | undefined {
  return (req as ValueRequest)[VALUE_BODY];
}
