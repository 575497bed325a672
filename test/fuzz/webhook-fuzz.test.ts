import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signStandardWebhook } from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { SECRET } from "../http/helpers/webhooks.js";
import {
  assertPrototypesClean,
  hostileBody,
  MUTATIONS,
  type Mutation,
  webhookLikeJson,
} from "./arbitraries.js";
import { BODY_LIMIT, fuzzApp, InputCounter, ledgerSnapshot } from "./fuzz-app.js";

// Signed bodies nest up to 10,000 levels: past the JSON depth limit they are refused (400), never a 500.
const SIGNED_MAX_DEPTH = 10_000;

let t: Awaited<ReturnType<typeof fuzzApp>>;
const counter = new InputCounter();
beforeAll(async () => {
  t = await fuzzApp();
});
afterAll(async () => {
  console.log(counter.report("webhook endpoint (in-process)"));
  await t.close();
});

let serial = 0;
function signed(body: Uint8Array, options: { id?: string; nowMs?: number } = {}): Record<string, string> {
  return {
    ...signStandardWebhook({
      id: options.id ?? `fuzz_${++serial}`,
      timestampSeconds: (options.nowMs ?? Date.now()) / 1000,
      body,
      secret: SECRET,
    }),
  };
}

function mutate(mutation: Mutation, body: Uint8Array, headers: Record<string, string>) {
  const h = { ...headers };
  let b = body;
  switch (mutation) {
    case "flip-body-byte":
      b = Uint8Array.from(body);
      b[body.length >> 1] = (b[body.length >> 1] ?? 0) ^ 0x01;
      break;
    case "append-body":
      b = new Uint8Array([...body, 0x20]);
      break;
    case "truncate-body":
      b = body.slice(0, -1);
      break;
    case "other-id":
      h["webhook-id"] = `${h["webhook-id"]}x`;
      break;
    case "other-timestamp":
      h["webhook-timestamp"] = String(Number(h["webhook-timestamp"]) + 1);
      break;
    case "drop-signature":
      delete h["webhook-signature"];
      break;
    case "drop-id":
      delete h["webhook-id"];
      break;
    case "drop-timestamp":
      delete h["webhook-timestamp"];
      break;
    case "corrupt-signature":
      h["webhook-signature"] = `v1,${Buffer.from(h["webhook-signature"] ?? "")
        .toString("base64")
        .slice(0, 44)}`;
      break;
    case "old-timestamp":
      return { body: b, headers: signed(body, { id: h["webhook-id"], nowMs: Date.now() - 3_600_000 }) };
    case "future-timestamp":
      return { body: b, headers: signed(body, { id: h["webhook-id"], nowMs: Date.now() + 3_600_000 }) };
    case "signature-of-other-body":
      return { body: b, headers: signed(new TextEncoder().encode('{"jobId":"j1","state":"succeeded"}')) };
  }
  return { body: b, headers: h };
}

async function post(provider: string, body: Uint8Array, headers: Record<string, string>): Promise<number> {
  const response = await t.app.request(`/webhooks/${provider}`, { method: "POST", headers, body });
  await response.arrayBuffer();
  return response.status;
}

describe("fuzzing the webhook endpoint", () => {
  it("a correctly signed request changed in any way is refused, never 5xx, and changes nothing", async () => {
    const before = await ledgerSnapshot(t.finality);
    const valid = webhookLikeJson.map((text) => new TextEncoder().encode(text));
    await fc.assert(
      fc.asyncProperty(valid, fc.constantFrom(...MUTATIONS), async (body, mutation) => {
        const request = mutate(mutation, body, signed(body));
        const status = await post("acme", request.body, request.headers);
        counter.add(`signed then mutated (${mutation})`, status);
        expect(status).toBeGreaterThanOrEqual(400);
        expect(status).toBeLessThan(500);
        assertPrototypesClean();
      }),
      { numRuns: 1200 },
    );
    expect(await ledgerSnapshot(t.finality)).toBe(before);
  });

  it("hostile bodies without a valid signature never get a 5xx and change nothing", async () => {
    const before = await ledgerSnapshot(t.finality);
    const headers = fc.record(
      {
        "webhook-id": fc.string({ maxLength: 40 }).filter((s) => /^[\x20-\x7e]*$/.test(s)),
        "webhook-timestamp": fc.oneof(hugeOrNumeric(), fc.constant(String(Math.floor(Date.now() / 1000)))),
        "webhook-signature": fc.constantFrom("v1,", "v1,AAAA", "v2,abc", "", "v1,".padEnd(50, "A")),
        "content-type": fc.constantFrom(
          "application/json",
          "text/plain; charset=utf-16",
          "application/x-www-form-urlencoded",
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("acme", "nobody", "ACME", "__proto__", "constructor"),
        headers,
        hostileBody(BODY_LIMIT),
        async (provider, h, body) => {
          const status = await post(provider, body, h);
          counter.add("unsigned hostile body", status);
          expect(status).toBeGreaterThanOrEqual(400);
          expect(status).toBeLessThan(500);
          assertPrototypesClean();
        },
      ),
      { numRuns: 1000 },
    );
    expect(await ledgerSnapshot(t.finality)).toBe(before);
  });

  it("correctly signed hostile bodies never get a 5xx; only a 200 changes anything", async () => {
    await fc.assert(
      fc.asyncProperty(hostileBody(BODY_LIMIT, SIGNED_MAX_DEPTH), async (body) => {
        const before = await ledgerSnapshot(t.finality);
        const status = await post("acme", body, signed(body));
        counter.add("signed hostile body", status);
        expect([200, 400, 413]).toContain(status);
        if (status !== 200) expect(await ledgerSnapshot(t.finality)).toBe(before);
        assertPrototypesClean();
      }),
      { numRuns: 1000 },
    );
  });
});

function hugeOrNumeric() {
  return fc.oneof(
    fc.constantFrom("1e400", "-1", "999999999999999999999", "0x10", " 1", "1.5"),
    fc.nat().map(String),
  );
}
