/**
 * Reads one HTTP/1.x response off a keep-alive socket, byte by byte as it arrives, keeping only
 * what a delivery needs: the status, `Retry-After`, whether the connection can carry another
 * request, and where the body ends (the body itself is skipped, never held). Pure: no sockets,
 * so every framing is tested by feeding bytes (test/effects/http1-response.test.ts).
 *
 * Framing follows RFC 9112 §6.3: no body for 1xx, 204 and 304; else `Transfer-Encoding: chunked`,
 * else `Content-Length`, else the body runs to the connection's close. Anything it cannot frame
 * exactly (two lengths that differ, a length beside a transfer coding, a bad chunk size, a head
 * over 16 KiB) is an `Http1ParseError`, and the caller closes the connection: a socket whose
 * framing is in doubt is never used again.
 */

/** node:http's default `maxHeaderSize`: a head longer than this is refused, not buffered. */
export const MAX_HEAD_BYTES = 16 * 1024;
/** A chunk-size line (with its extensions) longer than this is refused. */
const MAX_CHUNK_LINE_BYTES = 1024;

/** A response the reader cannot frame; `code` as llhttp names the same fault in node:http. */
export class Http1ParseError extends Error {
  readonly code: string;
  constructor(code: string, what: string) {
    super(`Parse Error: ${what}`);
    this.name = "Http1ParseError";
    this.code = code;
  }
}

/** What `read` says of the response after a chunk. */
export const NEED_MORE = 0;
export const COMPLETE = 1;

enum Body {
  /** Still reading the head. */
  Head = 0,
  None = 1,
  Length = 2,
  Chunked = 3,
  /** Ends when the connection closes. */
  UntilClose = 4,
  Done = 5,
}

enum Chunk {
  SizeLine = 0,
  Data = 1,
  DataEnd = 2,
  Trailers = 3,
}

const CR = 13;
const LF = 10;

export class Http1ResponseReader {
  status = 0;
  retryAfter: string | null = null;
  /** Whether the connection may carry another request once this response is complete. */
  reusable = false;
  /** The server's `Keep-Alive: timeout=N` hint, in ms; null when it gave none. */
  keepAliveMs: number | null = null;
  /** After COMPLETE: the bytes of the last chunk that came after the response (none, normally). */
  leftover = 0;

  private body: Body = Body.Head;
  /** The head's bytes so far when it spans chunks (null while none are held). */
  private headSoFar: Buffer | null = null;
  private remaining = 0;
  private chunk: Chunk = Chunk.SizeLine;
  private line = "";
  private trailerBytes = 0;

  /** Ready for the next response on the same connection. */
  reset(): void {
    this.status = 0;
    this.retryAfter = null;
    this.reusable = false;
    this.keepAliveMs = null;
    this.leftover = 0;
    this.body = Body.Head;
    this.headSoFar = null;
    this.remaining = 0;
    this.chunk = Chunk.SizeLine;
    this.line = "";
    this.trailerBytes = 0;
  }

  /** Takes the next bytes off the connection: COMPLETE once the whole response is read. */
  read(bytes: Buffer): number {
    let at = 0;
    while (at < bytes.length || this.body === Body.None) {
      switch (this.body) {
        case Body.Head:
          at = this.readHead(bytes, at);
          break;
        case Body.None:
          this.body = Body.Done;
          break;
        case Body.Length: {
          const take = Math.min(this.remaining, bytes.length - at);
          this.remaining -= take;
          at += take;
          if (this.remaining === 0) this.body = Body.Done;
          break;
        }
        case Body.Chunked:
          at = this.readChunked(bytes, at);
          break;
        case Body.UntilClose:
          return NEED_MORE;
        case Body.Done:
          this.leftover = bytes.length - at;
          return COMPLETE;
      }
    }
    if (this.body !== Body.Done) return NEED_MORE;
    this.leftover = 0;
    return COMPLETE;
  }

  /** The connection closed: whether that completes the response (a body that runs to the close). */
  closedComplete(): boolean {
    if (this.body === Body.UntilClose) this.body = Body.Done;
    return this.body === Body.Done;
  }

  private readHead(bytes: Buffer, from: number): number {
    let data = bytes;
    let start = from;
    if (this.headSoFar !== null) {
      data = Buffer.concat([this.headSoFar, bytes.subarray(from)]);
      start = 0;
    }
    const end = headEnd(data, start);
    if (end === -1) {
      if (data.length - start > MAX_HEAD_BYTES)
        throw new Http1ParseError("HPE_HEADER_OVERFLOW", "Header overflow");
      this.headSoFar = Buffer.from(data.subarray(start));
      return bytes.length;
    }
    if (end - start > MAX_HEAD_BYTES) throw new Http1ParseError("HPE_HEADER_OVERFLOW", "Header overflow");
    const consumedFromHeld = this.headSoFar === null ? 0 : this.headSoFar.length;
    this.headSoFar = null;
    this.parseHead(data.toString("latin1", start, end));
    // `end` indexes `data`; in `bytes` the head ended `consumedFromHeld` bytes earlier.
    return data === bytes ? end : from + (end - consumedFromHeld);
  }

  private parseHead(head: string): void {
    const lines = head.split("\n");
    const statusLine = stripCr(lines[0] as string);
    const version = statusLine.slice(0, 9);
    if ((version !== "HTTP/1.1 " && version !== "HTTP/1.0 ") || !/^\d{3}(?: |$)/.test(statusLine.slice(9))) {
      throw new Http1ParseError("HPE_INVALID_CONSTANT", "Expected HTTP/");
    }
    const status = Number(statusLine.slice(9, 12));
    let length: number | null = null;
    let chunked = false;
    let otherCoding = false;
    let connection = "";
    let retryAfter: string | null = null;
    let keepAlive: string | null = null;
    // The last line is the empty one that ends the head.
    for (let i = 1; i < lines.length - 1; i++) {
      const line = stripCr(lines[i] as string);
      if (line === "") continue;
      const colon = line.indexOf(":");
      if (colon <= 0 || !TOKEN.test(line.slice(0, colon))) {
        throw new Http1ParseError("HPE_INVALID_HEADER_TOKEN", "Invalid header token");
      }
      const value = line.slice(colon + 1).trim();
      if (/[\r\0]/.test(value))
        throw new Http1ParseError("HPE_INVALID_HEADER_TOKEN", "Invalid header value char");
      switch (line.slice(0, colon).toLowerCase()) {
        case "content-length": {
          if (!/^\d{1,15}$/.test(value)) {
            throw new Http1ParseError("HPE_INVALID_CONTENT_LENGTH", "Invalid character in Content-Length");
          }
          const n = Number(value);
          if (length !== null && length !== n) {
            throw new Http1ParseError("HPE_UNEXPECTED_CONTENT_LENGTH", "Duplicate Content-Length");
          }
          length = n;
          break;
        }
        case "transfer-encoding": {
          // Codings are listed in order applied; the body is chunked only when chunked is last.
          const codings = value.toLowerCase().split(",");
          chunked = codings[codings.length - 1]?.trim() === "chunked";
          otherCoding = !chunked;
          break;
        }
        case "connection":
          connection += `${value.toLowerCase()},`;
          break;
        case "retry-after":
          retryAfter ??= value;
          break;
        case "keep-alive":
          keepAlive = value;
          break;
      }
    }
    if (status < 200) {
      // 101 would switch protocols (never asked for); 100, 102, 103 precede the real answer.
      if (status === 101) throw new Http1ParseError("HPE_INVALID_CONSTANT", "Unexpected protocol switch");
      this.body = Body.Head;
      return;
    }
    if ((chunked || otherCoding) && length !== null) {
      throw new Http1ParseError(
        "HPE_UNEXPECTED_CONTENT_LENGTH",
        "Content-Length can't be present with Transfer-Encoding",
      );
    }
    this.status = status;
    this.retryAfter = retryAfter;
    const closes = /(?:^|[\s,])close\s*,/.test(connection);
    this.reusable = !closes && (version === "HTTP/1.1 " || /(?:^|[\s,])keep-alive\s*,/.test(connection));
    if (keepAlive !== null) {
      const timeout = /(?:^|[\s,;])timeout\s*=\s*(\d+)/i.exec(keepAlive);
      if (timeout) this.keepAliveMs = Number(timeout[1]) * 1000;
    }
    if (status === 204 || status === 304) this.body = Body.None;
    else if (chunked) this.body = Body.Chunked;
    else if (otherCoding || length === null) {
      this.body = Body.UntilClose;
      this.reusable = false;
    } else if (length === 0) this.body = Body.None;
    else {
      this.body = Body.Length;
      this.remaining = length;
    }
  }

  private readChunked(bytes: Buffer, from: number): number {
    let at = from;
    while (at < bytes.length && this.body === Body.Chunked) {
      switch (this.chunk) {
        case Chunk.SizeLine: {
          const lf = bytes.indexOf(LF, at);
          const upTo = lf === -1 ? bytes.length : lf;
          this.line += bytes.toString("latin1", at, upTo);
          if (this.line.length > MAX_CHUNK_LINE_BYTES) {
            throw new Http1ParseError("HPE_INVALID_CHUNK_SIZE", "Chunk size line too long");
          }
          if (lf === -1) return bytes.length;
          at = lf + 1;
          const size = /^0*([0-9a-fA-F]{1,13})[ \t]*(?:;[^\r]*)?\r?$/.exec(this.line);
          this.line = "";
          if (size === null)
            throw new Http1ParseError("HPE_INVALID_CHUNK_SIZE", "Invalid character in chunk size");
          this.remaining = Number.parseInt(size[1] as string, 16);
          this.chunk = this.remaining === 0 ? Chunk.Trailers : Chunk.Data;
          break;
        }
        case Chunk.Data: {
          const take = Math.min(this.remaining, bytes.length - at);
          this.remaining -= take;
          at += take;
          if (this.remaining === 0) this.chunk = Chunk.DataEnd;
          break;
        }
        case Chunk.DataEnd: {
          // CRLF after the data (a bare LF is taken too); `line` holds the CR once seen.
          const byte = bytes[at] as number;
          at++;
          if (byte === LF) {
            this.chunk = Chunk.SizeLine;
            this.line = "";
          } else if (byte === CR && this.line === "") this.line = "\r";
          else throw new Http1ParseError("HPE_STRICT", "Expected LF after chunk data");
          break;
        }
        case Chunk.Trailers: {
          // Trailer lines up to an empty one; they are skipped (bounded like a head).
          const lf = bytes.indexOf(LF, at);
          const upTo = lf === -1 ? bytes.length : lf;
          this.trailerBytes += upTo - at + 1;
          if (this.trailerBytes > MAX_HEAD_BYTES)
            throw new Http1ParseError("HPE_HEADER_OVERFLOW", "Header overflow");
          this.line += bytes.toString("latin1", at, upTo);
          if (lf === -1) return bytes.length;
          at = lf + 1;
          const empty = this.line === "" || this.line === "\r";
          this.line = "";
          if (empty) this.body = Body.Done;
          break;
        }
      }
    }
    return at;
  }
}

/** A header name: RFC 9110's token. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;

const stripCr = (line: string) => (line.endsWith("\r") ? line.slice(0, -1) : line);

/**
 * Where the head ends in `data` from `start` (the index after its empty line), or -1. A line ends
 * with CRLF or a bare LF (RFC 9112 §2.2 lets a recipient take either).
 */
function headEnd(data: Buffer, start: number): number {
  let lf = data.indexOf(LF, start);
  while (lf !== -1) {
    const next = data[lf + 1];
    if (next === LF) return lf + 2;
    if (next === CR && data[lf + 2] === LF) return lf + 3;
    if (next === undefined || (next === CR && lf + 2 >= data.length)) return -1;
    lf = data.indexOf(LF, lf + 1);
  }
  return -1;
}
