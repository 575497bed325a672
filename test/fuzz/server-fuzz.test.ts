import { connect } from "node:net";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { signStandardWebhook } from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { tempDir } from "../helpers/temp-dir.js";
import type { Service } from "../http/helpers/service.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { serveWith } from "../service/service-helpers.js";
import { hostileBody, MUTATIONS } from "./arbitraries.js";
import { InputCounter } from "./fuzz-app.js";

const counter = new InputCounter();
const dir = tempDir("finality-fuzz-");
afterAll(() => {
  console.log(counter.report("real finality serve"));
  dir.cleanup();
});

/** Raw bytes on a socket: what fetch refuses to send. Resolves with the status line's code, or 0. */
function raw(url: string, request: string): Promise<number> {
  const { port } = new URL(url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), "127.0.0.1", () => socket.end(request));
    let answer = "";
    socket.on("data", (chunk) => {
      answer += chunk.toString("latin1");
    });
    socket.on("close", () => resolve(Number(/^HTTP\/1\.[01] (\d{3})/.exec(answer)?.[1] ?? 0)));
    socket.on("error", () => resolve(0));
  });
}

const RAW_REQUESTS = [
  'POST /webhooks/acme HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n{"a"',
  "POST /webhooks/acme HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nxx\r\n0\r\n\r\n",
  "POST /webhooks/acme HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\nabcd",
  "POST /webhooks/acme HTTP/1.1\r\nHost: x\r\nwebhook-id: \xff\xfe\r\nContent-Length: 2\r\n\r\n{}",
  "GET /v1/jobs/%ZZ/%00 HTTP/1.1\r\nHost: x\r\n\r\n",
  `GET /v1/jobs?${"a=1&".repeat(2000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
  `POST /webhooks/acme HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\nContent-Length: 2\r\n\r\n{}`,
  "BREW /webhooks/acme HTTP/1.1\r\nHost: x\r\n\r\n",
  "POST /webhooks/acme HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
  "GARBAGE\r\n\r\n",
];

describe("fuzzing a real finality serve", () => {
  let service: Service;
  it("hostile requests over real sockets: no 5xx, no crash, nothing unsigned changes the ledger", async () => {
    service = await serveWith(dir, dir.file("fuzz.db"), {
      server: { bodyLimitBytes: 262_144 },
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
    });
    const jobs = async () => (await fetch(`${service.url}/v1/jobs?limit=500`)).text();
    const before = await jobs();
    await fc.assert(
      fc.asyncProperty(hostileBody(262_144), fc.constantFrom(...MUTATIONS), async (body, mutation) => {
        const headers: Record<string, string> = signStandardWebhook({
          id: `srv_${mutation}`,
          timestampSeconds: Date.now() / 1000,
          body: new TextEncoder().encode("{}"),
          secret: SECRET,
        }) as unknown as Record<string, string>;
        const response = await fetch(`${service.url}/webhooks/acme`, { method: "POST", headers, body });
        await response.arrayBuffer();
        counter.add("unsigned hostile body", response.status);
        expect(response.status).toBeGreaterThanOrEqual(400);
        expect(response.status).toBeLessThan(500);
      }),
      { numRuns: 150 },
    );
    for (const request of RAW_REQUESTS) {
      const status = await raw(service.url, request);
      counter.add("malformed HTTP", status);
      expect(status === 0 || status < 500).toBe(true);
    }
    expect(await jobs()).toBe(before);

    await fc.assert(
      fc.asyncProperty(hostileBody(262_144, 2_000), async (body) => {
        const headers = signStandardWebhook({
          id: `signed_${Math.random()}`,
          timestampSeconds: Date.now() / 1000,
          body,
          secret: SECRET,
        });
        const response = await fetch(`${service.url}/webhooks/acme`, {
          method: "POST",
          headers: { ...headers },
          body,
        });
        await response.arrayBuffer();
        counter.add("signed hostile body", response.status);
        expect([200, 400, 413]).toContain(response.status);
      }),
      { numRuns: 100 },
    );
    expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    const exit = await service.stop("SIGTERM");
    expect(exit.code).toBe(0);
    expect(service.stderr()).not.toMatch(/unexpected error|uncaught/i);
  });
});
