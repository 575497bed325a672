import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DeliveryError } from "../../src/engine/delivery-error.js";
import { createHttpEffectDeliverer, fetchTransport } from "../../src/engine/http-effect-target.js";
import { createNodeHttpTransport } from "../../src/engine/node-http-transport.js";
import { makeJob } from "../helpers/records.js";

describe.each([
  ["fetch", fetchTransport],
  ["node:http", createNodeHttpTransport()],
])("effect deliveries over %s", (_name, transport) => {
  let server: Server;
  let base = "";
  const seen: { path: string; headers: Record<string, unknown>; body: string }[] = [];
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        seen.push({ path: req.url ?? "", headers: req.headers, body });
        if (req.url === "/ok") res.writeHead(204).end();
        else if (req.url === "/moved") res.writeHead(302, { location: "/ok" }).end();
        else if (req.url === "/busy") res.writeHead(429, { "retry-after": "120" }).end();
        // /slow never answers: the delivery must time out.
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const deliver = createHttpEffectDeliverer({ transport, now: () => Date.UTC(2026, 0, 1) });
  const delivery = {
    type: "job.settled" as const,
    effect: "notify",
    idempotencyKey: "fin_key",
    attempt: 2,
    job: makeJob({ id: "j1", state: "succeeded" }),
  };
  const definition = (path: string) => ({
    name: "notify",
    url: `${base}${path}`,
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
  });

  it("POSTs the signed delivery and accepts a 2xx", async () => {
    await deliver(definition("/ok"), delivery, AbortSignal.timeout(5000));
    const last = seen.at(-1);
    expect(last?.headers["webhook-id"]).toBe("fin_key");
    expect(last?.headers["finality-attempt"]).toBe("2");
    expect(String(last?.headers["webhook-signature"])).toMatch(/^v1,/);
    expect(JSON.parse(last?.body ?? "{}")).toMatchObject({
      idempotencyKey: "fin_key",
      attempt: 2,
      job: { id: "j1" },
    });
  });

  it("treats a redirect as a failure and does not follow it", async () => {
    const before = seen.length;
    await expect(deliver(definition("/moved"), delivery, AbortSignal.timeout(5000))).rejects.toThrow(
      "answered 302",
    );
    expect(seen.length).toBe(before + 1);
  });

  it("carries the receiver's Retry-After", async () => {
    const error = await deliver(definition("/busy"), delivery, AbortSignal.timeout(5000)).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(DeliveryError);
    expect((error as DeliveryError).retryAfterMs).toBe(120_000);
  });

  it("times out a receiver that never answers", async () => {
    await expect(deliver(definition("/slow"), delivery, AbortSignal.timeout(100))).rejects.toThrow(
      "timed out",
    );
  });
});
