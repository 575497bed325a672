import { request } from "node:http";

export interface RawPostBody {
  /** How many bytes to send (ignored when `endless`). */
  bytes: number;
  /** Without a Content-Length: Transfer-Encoding: chunked, as a streaming client sends. */
  chunked: boolean;
  /** Keeps sending until the server answers (a body that never ends; implies chunked). */
  endless?: boolean;
  /**
   * Sends `bytes` and then holds the body open without ever ending it (implies chunked): a server
   * that waits for the end never answers. Unlike `endless`, nothing is being written when the
   * server answers and closes, so the answer cannot be lost to a reset that a write runs into.
   */
  open?: boolean;
}

export interface RawAnswer {
  status: number;
  contentType: string | null;
  body: Record<string, unknown> | null;
  /** Bytes of the body written before the answer came (or the connection went). */
  sentBytes: number;
  /** Set when the connection failed before an answer arrived (a reset, a refused connection). */
  error?: string;
}

const CHUNK = Buffer.alloc(16 * 1024, "x");
/** An endless body stops here at the latest, so a server that reads everything cannot hang a test. */
const ENDLESS_CAP = 256 * 1024 * 1024;

/**
 * A POST over a real loopback socket (node:http), with a body of `bytes` or one that never ends,
 * as a client that stops sending once it has its answer. fetch cannot say what a refused
 * streaming upload got: it fails the whole request when the server stops reading.
 */
export function rawPost(
  base: URL | string,
  path: string,
  headers: Record<string, string>,
  body: RawPostBody,
): Promise<RawAnswer> {
  const target = new URL(path, base);
  const chunked = body.chunked || body.endless === true || body.open === true;
  const sendHeaders: Record<string, string> = { ...headers };
  if (!chunked) sendHeaders["content-length"] = String(body.bytes);
  const total = body.endless ? ENDLESS_CAP : body.bytes;
  return new Promise((resolve) => {
    let sentBytes = 0;
    let answered = false;
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: "POST",
        headers: sendHeaders,
      },
      (res) => {
        answered = true;
        let text = "";
        res.on("data", (chunk: Buffer) => {
          text += chunk.toString();
        });
        res.on("end", () => {
          req.destroy();
          let parsed: Record<string, unknown> | null = null;
          try {
            parsed = JSON.parse(text) as Record<string, unknown>;
          } catch {
            // Not JSON: the status and content type say enough.
          }
          const type = res.headers["content-type"];
          resolve({ status: res.statusCode ?? 0, contentType: type ?? null, body: parsed, sentBytes });
        });
      },
    );
    req.on("error", (error) => {
      if (!answered) resolve({ status: 0, contentType: null, body: null, sentBytes, error: String(error) });
    });
    const pump = () => {
      while (!answered && sentBytes < total) {
        const piece = CHUNK.subarray(0, Math.min(CHUNK.length, total - sentBytes));
        sentBytes += piece.length;
        if (!req.write(piece)) {
          req.once("drain", pump);
          return;
        }
      }
      if (!answered && body.open !== true) req.end();
    };
    pump();
  });
}
