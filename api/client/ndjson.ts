/**
 * Splits a byte stream of newline-delimited JSON (a `?watch=1` response) into parsed values.
 * Tolerates values split across chunks, several values in one chunk, `\r\n`, and blank heartbeat lines.
 */

/** Incremental NDJSON decoder: feed it chunks, get back the complete values seen so far. */
export class NdjsonDecoder {
  private buffered = '';
  private readonly decoder = new TextDecoder('utf-8');

  /** Adds a chunk and returns every value completed by it (blank lines are skipped). */
  push(chunk: Uint8Array | string): unknown[] {
    this.buffered += typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    const out: unknown[] = [];
    let nl = this.buffered.indexOf('\n');
    while (nl >= 0) {
      const line = this.buffered.slice(0, nl).trim();
      this.buffered = this.buffered.slice(nl + 1);
      if (line) out.push(parseLine(line));
      nl = this.buffered.indexOf('\n');
    }
    return out;
  }

  /** Returns the last value when the stream ended without a trailing newline. */
  end(): unknown[] {
    const line = (this.buffered + this.decoder.decode()).trim();
    this.buffered = '';
    return line ? [parseLine(line)] : [];
  }
}

function parseLine(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw new SyntaxError(`malformed watch event: ${line.length > 80 ? line.slice(0, 80) + '…' : line}`);
  }
}

/** Decodes an async stream of chunks into the NDJSON values it carries. */
export async function* decodeNdjson(chunks: AsyncIterable<Uint8Array | string>): AsyncGenerator<unknown> {
  const decoder = new NdjsonDecoder();
  for await (const chunk of chunks) yield* decoder.push(chunk);
  yield* decoder.end();
}
