import { type RequestOptions, validateHeaderName, validateHeaderValue } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { DeliveryStop } from "./effect-target.js";
import { type StopAwareTransport, stopReasonOf } from "./http-effect-target.js";
import { createHttp1Client, type Http1Answer, type Http1Origin } from "./http1-client.js";

/** A receiver's URL as the transport needs it, worked out once: effects go to a few configured URLs. */
interface Receiver {
  /** Set for an https URL: node:https's options but the headers (which differ per delivery). */
  secure: HttpsOptions | null;
  /** For a plain-http URL: where the lean client connects. */
  origin: Http1Origin;
  /** The request line, `POST <path> HTTP/1.1`. */
  requestLine: string;
  /** `Host` (with the port when it is not the scheme's own) and `Authorization` from the URL's credentials. */
  lines: readonly string[];
}

type HttpsOptions = Required<Pick<RequestOptions, "protocol" | "hostname" | "path" | "agent">> & {
  port: number | undefined;
};

/** More distinct URLs than this and the parsed ones are dropped and parsed again as they come. */
const MAX_RECEIVERS = 256;

/**
 * The Node transport for effect deliveries: plain http through the lean HTTP/1.1 client
 * (http1-client.ts), https through node:https with a keep-alive agent. Both do what
 * `fetchTransport` does for a fraction of the CPU (fetch's web streams cost more per delivery than
 * the whole webhook intake), which matters because the dispatcher shares the process with intake.
 *
 * The head is written here, in node:http's order and with its checks (each name and value through
 * node:http's own validators, before anything is sent): `Host` and the URL's `Authorization`
 * first, then `Content-Length`, the caller's headers, and `Connection: keep-alive`. node:https is
 * handed the same lines as one flat array, which it writes as they are.
 */
export function createNodeHttpTransport(options: { maxSockets?: number } = {}): StopAwareTransport {
  const maxSockets = options.maxSockets ?? 50;
  const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets });
  const client = createHttp1Client({ maxSockets });
  const receivers = new Map<string, Receiver>();

  function receiverOf(url: string): Receiver {
    const known = receivers.get(url);
    if (known !== undefined) return known;
    const target = new URL(url);
    const secure = target.protocol === "https:";
    const lines = ["host", target.host];
    // As node:http does for a URL with credentials (urlToHttpOptions): Basic, percent-decoded.
    if (target.username !== "" || target.password !== "") {
      const auth = `${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`;
      lines.push("authorization", `Basic ${Buffer.from(auth).toString("base64")}`);
    }
    // A bracketed IPv6 literal in the URL is a bare address to the socket.
    const hostname = target.hostname.startsWith("[") ? target.hostname.slice(1, -1) : target.hostname;
    const port = target.port === "" ? undefined : Number(target.port);
    const path = `${target.pathname}${target.search}`;
    const origin = { host: hostname, port: port ?? 80, key: `${hostname}:${port ?? 80}` };
    const receiver: Receiver = {
      secure: secure ? { protocol: target.protocol, hostname, port, path, agent: httpsAgent } : null,
      origin,
      requestLine: `POST ${path} HTTP/1.1\r\n`,
      lines,
    };
    if (receivers.size >= MAX_RECEIVERS) receivers.clear();
    receivers.set(url, receiver);
    return receiver;
  }

  const send = (
    url: string,
    headers: Record<string, string>,
    body: string,
    stop: AbortSignal | DeliveryStop,
  ) =>
    new Promise<{ status: number; retryAfter: string | null }>((resolveAnswer, rejectAnswer) => {
      const early = stopReasonOf(stop);
      if (early !== null) return rejectAnswer(abortErrorOf(early));
      let unwatch = () => {};
      const settled =
        <T>(settle: (value: T) => void) =>
        (value: T) => {
          unwatch();
          settle(value);
        };
      const resolve = settled(resolveAnswer);
      const reject = settled(rejectAnswer);
      const receiver = receiverOf(url);
      const bodyBytes = Buffer.byteLength(body);
      const lines = [...receiver.lines, "content-length", String(bodyBytes)];
      for (const name in headers) {
        const lower = name.toLowerCase();
        // The caller's own Host or Authorization wins, as with node:http's object form.
        if (lower === "host" || lower === "authorization") dropLine(lines, lower);
        lines.push(name, headers[name] as string);
      }
      let stopRequest: (error: Error) => void;
      let answer: Promise<Http1Answer>;
      try {
        if (receiver.secure !== null) {
          const sent = sendOverHttps(receiver.secure, lines, body);
          stopRequest = sent.stop;
          answer = sent.answer;
        } else {
          const sent = client.send(
            receiver.origin,
            requestBytes(receiver.requestLine, lines, body, bodyBytes),
          );
          stopRequest = sent.stop;
          answer = sent.answer;
        }
      } catch (error) {
        return reject(error as Error);
      }
      // One stop listener of our own, removed when the request settles: node:http's `signal`
      // option wires the request's end-of-stream machinery to it, ~30,000 instructions a delivery.
      // The dispatcher's DeliveryStop takes a plain callback: no AbortSignal is made at all.
      const onAbort = () => stopRequest(abortErrorOf(stopReasonOf(stop)));
      if ("onStop" in stop) unwatch = stop.onStop(onAbort);
      else {
        stop.addEventListener("abort", onAbort, { once: true });
        unwatch = () => stop.removeEventListener("abort", onAbort);
      }
      answer.then(resolve, reject);
    });
  return Object.assign(send, { takesDeliveryStop: true as const });
}

/** One POST over node:https, its answer drained so the socket goes back to the agent's pool. */
function sendOverHttps(
  target: HttpsOptions,
  lines: string[],
  body: string,
): { answer: Promise<Http1Answer>; stop: (error: Error) => void } {
  let stop: (error: Error) => void = () => {};
  const answer = new Promise<Http1Answer>((resolve, reject) => {
    // Every key in one literal: a key after a spread costs V8 a runtime call and a new hidden class.
    const { protocol, hostname, port, path, agent } = target;
    const options = { protocol, hostname, port, path, method: "POST", agent, headers: lines };
    const req = httpsRequest(options, (res) => {
      res.resume();
      res.on("end", () => {
        const retryAfter = res.headers["retry-after"];
        resolve({
          status: res.statusCode ?? 0,
          retryAfter: typeof retryAfter === "string" ? retryAfter : null,
        });
      });
      res.on("error", reject);
    });
    req.on("error", reject);
    stop = (error) => req.destroy(error);
    req.end(body);
  });
  return { answer, stop };
}

/**
 * The whole request as one buffer: the head in latin1 (as node:http writes it; a value may hold
 * obs-text bytes), the body in UTF-8. Names and values go through node:http's own validators, so
 * what node:http would refuse is refused here, before anything is sent.
 */
function requestBytes(requestLine: string, lines: string[], body: string, bodyBytes: number): Buffer {
  let head = requestLine;
  for (let i = 0; i < lines.length; i += 2) {
    const name = lines[i] as string;
    const value = lines[i + 1] as string;
    validateHeaderName(name);
    validateHeaderValue(name, value);
    head += `${name}: ${value}\r\n`;
  }
  head += "connection: keep-alive\r\n\r\n";
  const bytes = Buffer.allocUnsafe(head.length + bodyBytes);
  bytes.write(head, 0, "latin1");
  bytes.write(body, head.length, "utf8");
  return bytes;
}

/** What a stopped delivery's request fails with: the stop's reason, as node:http's `signal` gives it. */
function abortErrorOf(reason: unknown): Error {
  const error = new Error("The operation was aborted", { cause: reason });
  error.name = "AbortError";
  return error;
}

/** Removes the `name` line (and its value) that the URL put first in `lines`. */
function dropLine(lines: string[], name: string): void {
  const at = lines.indexOf(name);
  if (at !== -1 && at % 2 === 0) lines.splice(at, 2);
}
