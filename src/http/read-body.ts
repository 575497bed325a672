import { FinalityError } from "../core/errors.js";

/**
 * Reads a request body once, as bytes, refusing more than `limitBytes` (413).
 *
 * With a Content-Length (the usual case) the length is checked before reading, and the HTTP
 * parser guarantees the body is no longer than announced, so the runtime's own fast read is used.
 * Without one (chunked), the stream is counted as it arrives and cancelled at the limit, so an
 * endless body never fills memory.
 */
export async function readBody(request: Request, limitBytes: number): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    const length = Number(declared);
    if (!Number.isFinite(length) || length < 0)
      throw new FinalityError("invalid-request", "content-length is not a number");
    if (length > limitBytes) throw tooLarge(limitBytes);
    const bytes = new Uint8Array(await request.arrayBuffer().catch(clientGone));
    if (bytes.byteLength > limitBytes) throw tooLarge(limitBytes);
    return bytes;
  }
  return readCounted(request, limitBytes);
}

async function readCounted(request: Request, limitBytes: number): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const value of chunksOf(reader)) {
    total += value.byteLength;
    if (total > limitBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limitBytes);
    }
    chunks.push(value);
  }
  return concat(chunks, total);
}

/** The chunks of a body as they arrive; a client gone mid-body is a 400 (`clientGone`). */
async function* chunksOf(reader: ReadableStreamDefaultReader<Uint8Array>): AsyncGenerator<Uint8Array> {
  for (;;) {
    const { done, value } = await reader.read().catch(clientGone);
    if (done) return;
    yield value;
  }
}

function concat(chunks: Uint8Array[], total: number): Uint8Array {
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
}

/** How much of a refused body is still read and thrown away, so the client can take its answer. */
interface DrainLimits {
  bytes: number;
  ms: number;
}

/**
 * At most `maxBytes` of a request's body, for a caller that forwards the body and leaves the
 * refusal to the receiver: anything longer than the receiver's limit can be cut at the limit plus
 * one byte and is refused just the same. What follows the cut is read and thrown away, up to
 * `drain` (a sender that has sent its whole body reads the answer; one whose connection is closed
 * mid-body often sees only a reset), and the stream is then cancelled.
 */
export async function readAtMost(
  request: Request,
  maxBytes: number,
  drain: DrainLimits,
): Promise<Uint8Array> {
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for await (const value of chunksOf(reader)) {
    const kept = value.byteLength > maxBytes - total ? value.subarray(0, maxBytes - total) : value;
    chunks.push(kept);
    total += kept.byteLength;
    if (total >= maxBytes) {
      await discard(reader, drain);
      break;
    }
  }
  return concat(chunks, total);
}

/** Reads and drops the rest of a stream, for at most `limits.bytes` and `limits.ms`, then cancels it. */
async function discard(reader: ReadableStreamDefaultReader<Uint8Array>, limits: DrainLimits): Promise<void> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), limits.ms);
  });
  try {
    let discarded = 0;
    while (discarded <= limits.bytes) {
      const next = await Promise.race([reader.read(), deadline]).catch(() => "gone" as const);
      if (next === "late" || next === "gone" || next.done) break;
      discarded += next.value.byteLength;
    }
  } finally {
    clearTimeout(timer);
    await reader.cancel().catch(() => {});
  }
}

/** A client that goes away mid-body is a bad request, not a server error (and is not logged as one). */
function clientGone(): never {
  throw new FinalityError("invalid-request", "the client closed the connection mid-body");
}

export function tooLarge(limitBytes: number): FinalityError {
  return new FinalityError("payload-too-large", `the body is larger than ${limitBytes} bytes`, {
    details: { limitBytes },
  });
}
