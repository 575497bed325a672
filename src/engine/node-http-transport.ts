import { Agent as HttpAgent, request as httpRequest, type RequestOptions } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { EffectTransport } from "./http-effect-target.js";

/** A receiver's URL as node:http needs it, worked out once: effects go to a few configured URLs. */
interface Receiver {
  send: typeof httpRequest;
  options: RequestOptions;
  /** `Host` (with the port when it is not the scheme's own) and `Authorization` from the URL's credentials. */
  lines: readonly string[];
}

/** More distinct URLs than this and the parsed ones are dropped and parsed again as they come. */
const MAX_RECEIVERS = 256;

/**
 * The Node transport for effect deliveries: `node:http` with keep-alive agents. It does the same
 * as `fetchTransport` for a fraction of the CPU (fetch's web streams cost more per delivery than
 * the whole webhook intake), which matters because the dispatcher shares the process with intake.
 *
 * Headers go to node:http as one flat array, which it writes as they are (each name and value
 * still validated): an object costs a `setHeader` each (lower-casing, a map) and node:http then
 * adds `Host` and the URL's `Authorization` itself, so with an array those two are written here.
 */
export function createNodeHttpTransport(options: { maxSockets?: number } = {}): EffectTransport {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 50 };
  const agents = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };
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
    const receiver: Receiver = {
      send: secure ? httpsRequest : httpRequest,
      options: {
        protocol: target.protocol,
        // A bracketed IPv6 literal in the URL is a bare address to the socket.
        hostname: target.hostname.startsWith("[") ? target.hostname.slice(1, -1) : target.hostname,
        port: target.port === "" ? undefined : Number(target.port),
        path: `${target.pathname}${target.search}`,
        method: "POST",
        agent: secure ? agents.https : agents.http,
      },
      lines,
    };
    if (receivers.size >= MAX_RECEIVERS) receivers.clear();
    receivers.set(url, receiver);
    return receiver;
  }

  return (url, headers, body, signal) =>
    new Promise((resolveAnswer, rejectAnswer) => {
      if (signal.aborted) return rejectAnswer(abortErrorOf(signal));
      // One abort listener of our own, removed when the request settles: node:http's `signal`
      // option wires the request's end-of-stream machinery to it, ~30,000 instructions a delivery.
      const onAbort = () => req.destroy(abortErrorOf(signal));
      const settled =
        <T>(settle: (value: T) => void) =>
        (value: T) => {
          signal.removeEventListener("abort", onAbort);
          settle(value);
        };
      const resolve = settled(resolveAnswer);
      const reject = settled(rejectAnswer);
      const receiver = receiverOf(url);
      const lines = [...receiver.lines, "content-length", String(Buffer.byteLength(body))];
      for (const name in headers) {
        const lower = name.toLowerCase();
        // The caller's own Host or Authorization wins, as with node:http's object form.
        if (lower === "host" || lower === "authorization") dropLine(lines, lower);
        lines.push(name, headers[name] as string);
      }
      const req = receiver.send({ ...receiver.options, headers: lines }, (res) => {
        // Drain the answer so the socket goes back to the pool.
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
      signal.addEventListener("abort", onAbort, { once: true });
      req.end(body);
    });
}

/** What a stopped delivery's request fails with: the signal's reason, as node:http's `signal` gives it. */
function abortErrorOf(signal: AbortSignal): Error {
  const error = new Error("The operation was aborted", { cause: signal.reason });
  error.name = "AbortError";
  return error;
}

/** Removes the `name` line (and its value) that the URL put first in `lines`. */
function dropLine(lines: string[], name: string): void {
  const at = lines.indexOf(name);
  if (at !== -1 && at % 2 === 0) lines.splice(at, 2);
}
