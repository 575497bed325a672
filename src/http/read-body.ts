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
  for (;;) {
    const { done, value } = await reader.read().catch(clientGone);
    if (done) break;
    total += value.byteLength;
    if (total > limitBytes) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limitBytes);
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const body = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    body.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return body;
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
