import { Agent as HttpAgent, request as httpRequest, type RequestOptions } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { DeliveryStop } from "./effect-target.js";
import { type StopAwareTransport, stopReasonOf } from "./http-effect-target.js";

/** A receiver's URL as node:http needs it, worked out once: effects go to a few configured URLs. */
interface Receiver {
  send: typeof httpRequest;
  options: ReceiverOptions;
  /** `Host` (with the port when it is not the scheme's own) and `Authorization` from the URL's credentials. */
  lines: readonly string[];
}

/** A receiver's request options but its headers (which differ per delivery). */
type ReceiverOptions = Required<Pick<RequestOptions, "protocol" | "hostname" | "path" | "agent">> & {
  port: number | undefined;
};

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
export function createNodeHttpTransport(options: { maxSockets?: number } = {}): StopAwareTransport {
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
        agent: secure ? agents.https : agents.http,
      },
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
      // One stop listener of our own, removed when the request settles: node:http's `signal`
      // option wires the request's end-of-stream machinery to it, ~30,000 instructions a delivery.
      // The dispatcher's DeliveryStop takes a plain callback: no AbortSignal is made at all.
      const onAbort = () => req.destroy(abortErrorOf(stopReasonOf(stop)));
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
      const lines = [...receiver.lines, "content-length", String(Buffer.byteLength(body))];
      for (const name in headers) {
        const lower = name.toLowerCase();
        // The caller's own Host or Authorization wins, as with node:http's object form.
        if (lower === "host" || lower === "authorization") dropLine(lines, lower);
        lines.push(name, headers[name] as string);
      }
      // Every key in one literal: a key after a spread costs V8 a runtime call and a new hidden class.
      const { protocol, hostname, port, path, agent } = receiver.options;
      const options = { protocol, hostname, port, path, method: "POST", agent, headers: lines };
      const req = receiver.send(options, (res) => {
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
      if ("onStop" in stop) unwatch = stop.onStop(onAbort);
      else {
        stop.addEventListener("abort", onAbort, { once: true });
        unwatch = () => stop.removeEventListener("abort", onAbort);
      }
      req.end(body);
    });
  return Object.assign(send, { takesDeliveryStop: true as const });
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
