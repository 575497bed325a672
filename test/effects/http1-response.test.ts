import { describe, expect, it } from "vitest";
import {
  COMPLETE,
  Http1ParseError,
  Http1ResponseReader,
  MAX_HEAD_BYTES,
  NEED_MORE,
} from "../../src/engine/http1-response.js";

// The response reader's framing, case by case (test/effects/http1-differential.test.ts checks it
// against node:http's own parser on generated responses).

/** Feeds `text` in the given pieces; the state after each. */
function feed(reader: Http1ResponseReader, ...pieces: string[]): number[] {
  return pieces.map((piece) => reader.read(Buffer.from(piece, "latin1")));
}

function readWhole(text: string): Http1ResponseReader {
  const reader = new Http1ResponseReader();
  expect(reader.read(Buffer.from(text, "latin1"))).toBe(COMPLETE);
  return reader;
}

function refusal(text: string): Http1ParseError {
  const reader = new Http1ResponseReader();
  try {
    reader.read(Buffer.from(text, "latin1"));
  } catch (error) {
    expect(error).toBeInstanceOf(Http1ParseError);
    return error as Http1ParseError;
  }
  throw new Error(`not refused: ${JSON.stringify(text)}`);
}

describe("the HTTP/1.x response reader", () => {
  it("frames a body by Content-Length, whatever the pieces", () => {
    const reader = new Http1ResponseReader();
    expect(feed(reader, "HTTP/1.1 200 OK\r\nContent-Le", "ngth: 5\r\n\r", "\nhel", "lo")).toEqual([
      NEED_MORE,
      NEED_MORE,
      NEED_MORE,
      COMPLETE,
    ]);
    expect(reader).toMatchObject({ status: 200, reusable: true, leftover: 0, retryAfter: null });
  });

  it("frames a chunked body with extensions and trailers", () => {
    const reader = new Http1ResponseReader();
    const text =
      "HTTP/1.1 202 Accepted\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3;a=b\r\nabc\r\nA\r\n0123456789\r\n0\r\nx-t: 1\r\n\r\n";
    const states = feed(reader, ...text.split(""));
    expect(states.at(-1)).toBe(COMPLETE);
    expect(states.slice(0, -1).every((state) => state === NEED_MORE)).toBe(true);
    expect(reader.status).toBe(202);
  });

  it("has no body for 204 and 304, and a zero length completes at the head", () => {
    for (const head of [
      "HTTP/1.1 204 No Content\r\n\r\n",
      "HTTP/1.1 304 Not Modified\r\ncontent-length: 9\r\n\r\n",
      "HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n",
    ]) {
      expect(readWhole(head).leftover).toBe(0);
    }
  });

  it("runs a body without length or chunked coding to the close, and never reuses the connection", () => {
    const reader = new Http1ResponseReader();
    expect(feed(reader, "HTTP/1.1 500 Oops\r\n\r\npartial", " body")).toEqual([NEED_MORE, NEED_MORE]);
    expect(reader.reusable).toBe(false);
    expect(reader.closedComplete()).toBe(true);
    // A coding other than chunked last is read to the close too.
    const gzip = new Http1ResponseReader();
    expect(feed(gzip, "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked, gzip\r\n\r\n0\r\n\r\n")).toEqual([
      NEED_MORE,
    ]);
    expect(gzip.closedComplete()).toBe(true);
  });

  it("is not complete when the connection closes inside a framed body", () => {
    const reader = new Http1ResponseReader();
    feed(reader, "HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc");
    expect(reader.closedComplete()).toBe(false);
  });

  it("skips 1xx answers and reads the final one", () => {
    const reader = readWhole(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early\r\nlink: x\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n",
    );
    expect(reader.status).toBe(201);
  });

  it("keeps the first Retry-After, the Keep-Alive hint, and what Connection says", () => {
    const reader = readWhole(
      "HTTP/1.1 429 Slow Down\r\nRetry-After: 30\r\nretry-after: 99\r\nKeep-Alive: max=5, timeout=4\r\nConnection: Close\r\ncontent-length: 0\r\n\r\n",
    );
    expect(reader).toMatchObject({ status: 429, retryAfter: "30", keepAliveMs: 4000, reusable: false });
    expect(
      readWhole("HTTP/1.1 200 OK\r\nconnection: keep-alive, upgrade\r\ncontent-length: 0\r\n\r\n").reusable,
    ).toBe(true);
    expect(
      readWhole("HTTP/1.1 200 OK\r\nconnection: closed-captions\r\ncontent-length: 0\r\n\r\n").reusable,
    ).toBe(true);
    expect(readWhole("HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n").reusable).toBe(false);
    // RFC 9112 §9.3: close wins, whatever else Connection names.
    expect(
      readWhole("HTTP/1.0 200 OK\r\nConnection: keep-alive, close\r\ncontent-length: 0\r\n\r\n").reusable,
    ).toBe(false);
    expect(readWhole("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\ncontent-length: 0\r\n\r\n").reusable).toBe(
      true,
    );
  });

  it("takes bare LF line ends, as RFC 9112 lets a recipient", () => {
    const reader = readWhole("HTTP/1.1 200 OK\ncontent-length: 2\n\nok");
    expect(reader.status).toBe(200);
    expect(readWhole("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\nok\n0\n\n").status).toBe(200);
  });

  it("reports the bytes that came after a complete response", () => {
    const reader = readWhole("HTTP/1.1 204 No Content\r\n\r\nHTTP/1.1 200");
    expect(reader.leftover).toBe("HTTP/1.1 200".length);
  });

  it("reads the next response on the same connection after reset", () => {
    const reader = readWhole(
      "HTTP/1.1 429 Busy\r\nretry-after: 5\r\ntransfer-encoding: chunked\r\n\r\n0\r\n\r\n",
    );
    reader.reset();
    expect(reader.read(Buffer.from("HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nx"))).toBe(COMPLETE);
    expect(reader).toMatchObject({ status: 200, retryAfter: null });
  });

  it("refuses what it cannot frame exactly, with llhttp's codes", () => {
    expect(refusal("HTTP/2 200 OK\r\n\r\n").code).toBe("HPE_INVALID_CONSTANT");
    expect(refusal("HTTP/1.1 2000 OK\r\n\r\n").code).toBe("HPE_INVALID_CONSTANT");
    expect(refusal("HTTP/1.1 101 Switching\r\n\r\n").code).toBe("HPE_INVALID_CONSTANT");
    expect(refusal("HTTP/1.1 200 OK\r\nbad name: x\r\n\r\n").code).toBe("HPE_INVALID_HEADER_TOKEN");
    expect(refusal("HTTP/1.1 200 OK\r\nno-colon\r\n\r\n").code).toBe("HPE_INVALID_HEADER_TOKEN");
    expect(refusal("HTTP/1.1 200 OK\r\nx: a\rb\r\n\r\n").code).toBe("HPE_INVALID_HEADER_TOKEN");
    expect(refusal("HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n").code).toBe("HPE_INVALID_CONTENT_LENGTH");
    expect(refusal("HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n").code).toBe(
      "HPE_UNEXPECTED_CONTENT_LENGTH",
    );
    expect(refusal("HTTP/1.1 200 OK\r\ncontent-length: 1\r\ntransfer-encoding: chunked\r\n\r\n").code).toBe(
      "HPE_UNEXPECTED_CONTENT_LENGTH",
    );
    expect(refusal("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n").code).toBe(
      "HPE_INVALID_CHUNK_SIZE",
    );
    expect(refusal("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokX").code).toBe("HPE_STRICT");
    // Leading zeros do not count toward a chunk size's 13 digits.
    expect(
      readWhole("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n00000000000003\r\nabc\r\n0\r\n\r\n")
        .status,
    ).toBe(200);
    // Equal repeated lengths are one length.
    expect(readWhole("HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 1\r\n\r\nx").status).toBe(200);
  });

  it("refuses a head or trailers over 16 KiB rather than holding them", () => {
    const long = `HTTP/1.1 200 OK\r\nx-big: ${"a".repeat(MAX_HEAD_BYTES)}`;
    const reader = new Http1ResponseReader();
    expect(() => feed(reader, long.slice(0, 9000), long.slice(9000))).toThrow(Http1ParseError);
    expect(() => readWhole(`${long}\r\n\r\n`)).toThrow("Header overflow");
    const trailers = `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n0\r\n${"x-t: 1\r\n".repeat(3000)}`;
    expect(() => readWhole(trailers)).toThrow("Header overflow");
    expect(() =>
      readWhole(`HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${"0".repeat(2000)}`),
    ).toThrow("Chunk size line too long");
  });
});
