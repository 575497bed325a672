import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type CloudEvent, HTTP } from "cloudevents";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import type { EffectDefinition } from "../../src/engine/effect-definitions.js";
import { createHttpEffectDeliverer, httpEffectTarget } from "../../src/engine/http-effect-target.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { brokerRun } from "./broker-harness.js";

// A url effect with format "cloudevents", POSTed over loopback to a receiver that keeps the raw
// request, which the cloudevents SDK then reads as an HTTP message (structured and binary mode).

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await new Promise((resolve) => server.close(resolve));
});

async function receiver() {
  const requests: { headers: IncomingHttpHeaders; body: string }[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      requests.push({ headers: req.headers, body });
      res.statusCode = 204;
      res.end();
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ce`, requests };
}

async function deliverOne(extra: Partial<EffectDefinition>) {
  const { url, requests } = await receiver();
  const run = brokerRun(
    { name: "hook", url, secret: SECRET, ...extra },
    httpEffectTarget(createHttpEffectDeliverer({ source: "finality://host-a" })),
  );
  try {
    await run.settle("ce", 1);
    await run.delivered(1);
    const [key] = await run.keys();
    const [request] = requests;
    if (!request || !key) throw new Error("nothing delivered");
    return { request, key };
  } finally {
    await run.close();
  }
}

const headersOf = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, String(value)]));

describe("CloudEvents over HTTP", () => {
  it.each(["structured", "binary"] as const)(
    "%s mode parses with the SDK, and is still signed",
    async (mode) => {
      const { request, key } = await deliverOne({
        format: "cloudevents",
        ...(mode === "binary" ? { cloudevents: { mode } } : {}),
      });
      const headers = headersOf(request.headers);
      expect(HTTP.isEvent({ headers, body: request.body })).toBe(true);
      const event = HTTP.toEvent({ headers, body: request.body }) as CloudEvent<{
        effect: string;
        job: { id: string };
      }>;
      expect(event.validate()).toBe(true);
      expect(event).toMatchObject({
        specversion: "1.0",
        id: key,
        source: "finality://host-a",
        type: "finality.job.succeeded",
        subject: "acme/ce-0",
        finalityattempt: "1",
      });
      expect(event.data).toMatchObject({ effect: "hook", job: { id: "ce-0", state: "succeeded" } });
      expect(headers["content-type"]).toContain(
        mode === "binary" ? "application/json" : "application/cloudevents+json",
      );
      expect(headers["webhook-id"]).toBe(key);
      new Webhook(SECRET).verify(request.body, headers);
    },
  );

  it("leaves the default format as it was: Finality's own body, no ce- headers", async () => {
    const { request, key } = await deliverOne({});
    expect(JSON.parse(request.body)).toMatchObject({
      type: "job.settled",
      effect: "hook",
      idempotencyKey: key,
      attempt: 1,
    });
    expect(Object.keys(request.headers).filter((name) => name.startsWith("ce-"))).toEqual([]);
    expect(request.headers["content-type"]).toBe("application/json");
  });
});
