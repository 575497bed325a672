import OpenAI from "openai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createOpenAIBatchLister } from "../../src/providers/openai/openai-list.js";
import { createProviderHealth } from "../../src/providers/provider-health.js";
import { createStatusClient } from "../../src/providers/status-client.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { OpenAIFake } from "../fakes/openai-fake.js";
import { openaiBatch } from "../fakes/openai-fixtures.js";
import { adapterFor } from "./helpers/adapter.js";
import { closedPortUrl, type ListerSubject, listerContract } from "./helpers/lister-contract.js";

const fake = new OpenAIFake();
let base: string;
let deadUrl: string;
let restoreFetch: () => void;

beforeAll(async () => {
  restoreFetch = loopbackOnly();
  base = `${await fake.listen()}/v1`;
  deadUrl = `${await closedPortUrl()}/v1`;
});
afterAll(async () => {
  await fake.close();
  restoreFetch();
});
beforeEach(() => fake.objects.clear());

const lister = (baseUrl = base) =>
  createOpenAIBatchLister(
    createStatusClient({
      provider: "openai",
      baseUrl,
      headers: { authorization: `Bearer ${fake.apiKey}` },
      health: createProviderHealth(),
    }),
  );

const subject = (): ListerSubject => ({
  server: fake.server,
  kind: "batch",
  pageSize: 100,
  ordered: true,
  taggable: true,
  deadUrl,
  staleCursor: "batch_gone",
  seed(jobs) {
    for (const job of jobs)
      fake.set({
        ...openaiBatch(job.id, "in_progress"),
        created_at: Math.floor(job.createdAt / 1000),
        metadata: job.tag === undefined ? { team: "search" } : { team: "search", finality_intent: job.tag },
      });
  },
  lister,
  listCalls: () => fake.listCalls,
});

describe("OpenAI batches list (GET /v1/batches)", () => {
  listerContract(subject);

  it("asks for the API's largest page and pages with `after` = the previous last_id", async () => {
    subject().seed(
      Array.from({ length: 150 }, (_, i) => ({ id: `batch_q${i}`, createdAt: Date.now() - i * 60_000 })),
    );
    const first = await lister().list({ resume: null, sinceMs: 0 }, AbortSignal.timeout(5000));
    if (first.kind !== "page") throw new Error(first.error);
    await lister().list({ resume: first.resume, sinceMs: 0 }, AbortSignal.timeout(5000));
    const calls = fake.server.seen.filter((request) => request.path === "/v1/batches").slice(-2);
    expect(calls.map((call) => Object.fromEntries(call.query))).toEqual([
      { limit: "100" },
      { limit: "100", after: "batch_q99" },
    ]);
  });

  it("the adapter lists batches only: background responses have no list endpoint", async () => {
    subject().seed([{ id: "batch_wired", createdAt: Date.now() }]);
    const adapter = adapterFor("openai", { type: "openai", baseUrl: base, apiKey: fake.apiKey });
    expect(adapter.lister?.kinds).toEqual(["batch"]);
    const page = await adapter.lister?.list({ resume: null, sinceMs: 0 }, AbortSignal.timeout(5000));
    expect(page).toMatchObject({ kind: "page", jobs: [{ id: "batch_wired", kind: "batch" }], done: true });
  });

  it("the fake's list is what the official SDK pages through", async () => {
    subject().seed(
      Array.from({ length: 45 }, (_, i) => ({ id: `batch_sdk${i}`, createdAt: Date.now() - i * 60_000 })),
    );
    const client = new OpenAI({ apiKey: fake.apiKey, baseURL: base, maxRetries: 0 });
    const seen: string[] = [];
    for await (const batch of client.batches.list({ limit: 20 })) seen.push(batch.id);
    expect(seen).toEqual(Array.from({ length: 45 }, (_, i) => `batch_sdk${i}`));
  });
});
