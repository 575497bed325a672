import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import type { EffectTransport } from "./http-effect-target.js";

/**
 * The Node transport for effect deliveries: `node:http` with keep-alive agents. It does the same
 * as `fetchTransport` for a fraction of the CPU (fetch's web streams cost more per delivery than
 * the whole webhook intake), which matters because the dispatcher shares the process with intake.
 */
export function createNodeHttpTransport(options: { maxSockets?: number } = {}): EffectTransport {
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 50 };
  const agents = { http: new HttpAgent(agentOptions), https: new HttpsAgent(agentOptions) };
  return (url, headers, body, signal) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const secure = target.protocol === "https:";
      const send = secure ? httpsRequest : httpRequest;
      const req = send(
        target,
        {
          method: "POST",
          agent: secure ? agents.https : agents.http,
          headers: { ...headers, "content-length": Buffer.byteLength(body) },
          signal,
        },
        (res) => {
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
        },
      );
      req.on("error", reject);
      req.end(body);
    });
}
