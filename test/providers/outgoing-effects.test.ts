import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher } from "../../src/engine/dispatcher.js";

/** An application's effect endpoint: keeps each POST's raw body and headers. */
const received: { body: string; headers: IncomingHttpHeaders }[] = [];
let receiver: Server;
let url: string;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({ body: Buffer.concat(chunks).toString("utf8"), headers: req.headers });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/done`;
});
afterAll(() => new Promise((resolve) => receiver.close(resolve)));

/** Settles one job with a URL effect signed with `secret`, delivers it, returns what arrived. */
async function deliveredWith(secret: string) {
  const finality = createFinality({
    store: { sqlite: ":memory:" },
    effects: [{ name: "notify", url, secret }],
  });
  await finality.ingest({
    provider: "openai",
    id: `resp_${received.length}`,
    state: "succeeded",
    source: "webhook",
    deliveryId: `d${received.length}`,
  });
  expect(await createDispatcher(finality).runOnce()).toBe(1);
  await finality.close();
  const last = received.at(-1);
  if (!last) throw new Error("nothing delivered");
  const headers = {
    "webhook-id": String(last.headers["webhook-id"]),
    "webhook-timestamp": String(last.headers["webhook-timestamp"]),
    "webhook-signature": String(last.headers["webhook-signature"]),
  };
  return { body: last.body, headers };
}

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

describe("Finality's outgoing effects verify with the providers' own SDKs", () => {
  it("openai webhooks.unwrap, Anthropic beta.webhooks.unwrap and standardwebhooks accept a whsec_ secret's delivery", async () => {
    const { body, headers } = await deliveredWith(SECRET);
    await expect(
      new OpenAI({ apiKey: "unused" }).webhooks.unwrap(body, headers, SECRET),
    ).resolves.toMatchObject({ type: "job.settled" });
    expect(
      new Anthropic({ apiKey: "unused" }).beta.webhooks.unwrap(body, { headers, key: SECRET }),
    ).toBeTruthy();
    expect(new Webhook(SECRET).verify(body, headers)).toBeTruthy();
  });

  it("openai accepts a raw secret's delivery (its UTF-8 bytes), as Finality signs it", async () => {
    const raw = "a-raw-secret-without-prefix";
    const { body, headers } = await deliveredWith(raw);
    await expect(new OpenAI({ apiKey: "unused" }).webhooks.unwrap(body, headers, raw)).resolves.toBeTruthy();
  });

  it("all three refuse the same delivery with its body changed", async () => {
    const { body, headers } = await deliveredWith(SECRET);
    const changed = body.replace("succeeded", "failed");
    await expect(
      new OpenAI({ apiKey: "unused" }).webhooks.unwrap(changed, headers, SECRET),
    ).rejects.toThrow();
    expect(() =>
      new Anthropic({ apiKey: "unused" }).beta.webhooks.unwrap(changed, { headers, key: SECRET }),
    ).toThrow();
    expect(() => new Webhook(SECRET).verify(changed, headers)).toThrow();
  });
});
