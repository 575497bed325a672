import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { FinalityClientError } from "../../src/client/http-call.js";
import { createFinalityClient, type FinalityClient } from "../../src/client/index.js";
import { engineOf } from "../helpers/engine.js";
import { type InProcess, inProcessApp, webhookInit } from "./helpers/in-process.js";

// Issue #33, defects 11 and 12, over HTTP: an id no URL can carry, or one a store would merge with
// another, is a typed 400 at every edge that takes one, and nothing is stored.

const BAD_IDS: [string, string][] = [
  ["a dot", "."],
  ["two dots", ".."],
  ["a lone high surrogate", "x\ud800"],
  ["a lone low surrogate", "x\udc00"],
];

let t: InProcess;
let client: FinalityClient;
beforeEach(async () => {
  t = await inProcessApp();
  client = createFinalityClient({
    baseUrl: "http://127.0.0.1",
    // Through a real Request: its URL parser drops dot segments as any HTTP client's does.
    fetch: (input, init) => Promise.resolve(t.app.request(input as string, init)),
  });
});
afterEach(() => t.close());

// JSON.stringify writes half a surrogate pair as an escape (\ud800), as a provider's body would.
const post = (path: string, body: unknown) =>
  t.app.request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

async function expectProblem(response: Response, code: string, field: string): Promise<void> {
  expect(response.status).toBe(400);
  expect(response.headers.get("content-type")).toContain("application/problem+json");
  expect(await response.json()).toMatchObject({ code, field });
}

async function expectNothingStored(): Promise<void> {
  expect((await t.finality.listJobs({})).items).toEqual([]);
  expect((await engineOf(t.finality).store.listParked({ limit: 10 })).items).toEqual([]);
}

describe.each(BAD_IDS)("an id with %s", (_name, id) => {
  it("POST /v1/jobs: 400, nothing stored", async () => {
    await expectProblem(await post("/v1/jobs", { provider: "acme", id }), "invalid-request", "id");
    await expectNothingStored();
  });

  it("POST /v1/intents (as its key) and POST /v1/intents/:key/attach: 400, nothing attached", async () => {
    await expectProblem(await post("/v1/intents", { provider: "acme", key: id }), "invalid-request", "key");
    expect((await post("/v1/intents", { provider: "acme", key: "order-1" })).status).toBe(201);
    await expectProblem(await post("/v1/intents/order-1/attach", { id }), "invalid-request", "id");
    const intent = await client.getIntent("order-1");
    expect(intent).toMatchObject({ status: "open" });
    expect(intent).not.toHaveProperty("jobId");
    await expectNothingStored();
  });

  it("a signed webhook carrying it: 400 problem, counted as malformed, nothing stored", async () => {
    const response = await t.app.request(
      "/webhooks/acme",
      webhookInit(JSON.stringify({ jobId: id, state: "succeeded" })),
    );
    await expectProblem(response, "invalid-observation", "jobId");
    await expectNothingStored();
    const metrics = await (await t.app.request("/metrics")).text();
    expect(metrics).toContain('finality_webhooks_received_total{provider="acme",outcome="malformed"} 1');
  });

  it("the library: register, ingest and attach refuse it with the same typed error", async () => {
    await expect(t.finality.register({ provider: "acme", id })).rejects.toMatchObject({
      code: "invalid-request",
    });
    await expect(
      t.finality.ingest({ provider: "acme", id, state: "running", source: "api" }),
    ).rejects.toMatchObject({ code: "invalid-observation" });
    await expectNothingStored();
  });
});

/**
 * Ids built from what URLs treat specially: dot segments (plain and percent-encoded), `/`, `%`,
 * `?`, `#`, spaces, letters outside ASCII, and halves of surrogate pairs.
 */
const idPart = fc.constantFrom(
  ".",
  "..",
  "/",
  "%",
  "%2e",
  "%2F",
  "?",
  "#",
  " ",
  "+",
  "é",
  "😀",
  "\ud800",
  "\udc00",
  "a",
  "events",
  "~",
);
const trickyId = fc.array(idPart, { minLength: 1, maxLength: 5 }).map((parts) => parts.join(""));

describe("the class: an id registration accepts is one a client can reach", () => {
  it("any id accepted by POST /v1/jobs reads back through the client (GET, events, observe)", async () => {
    await fc.assert(
      fc.asyncProperty(trickyId, async (id) => {
        // An id drawn twice is registered again (200 instead of 201): the reads hold all the same.
        let registered: string;
        try {
          registered = (await client.registerJob({ provider: "acme", id })).job.id;
        } catch (error) {
          // Refused: then as a typed 400, never a 5xx or an id stored under another name.
          expect(error).toBeInstanceOf(FinalityClientError);
          expect((error as FinalityClientError).status).toBe(400);
          return;
        }
        expect(registered).toBe(id);
        expect((await client.getJob("acme", id)).id).toBe(id);
        expect((await client.listJobEvents("acme", id)).items.length).toBeGreaterThan(0);
        const observed = await client.observeJob("acme", id, { state: "running" });
        expect(observed.job?.id).toBe(id);
      }),
      { numRuns: 200 },
    );
  });
});
