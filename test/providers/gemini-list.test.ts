import { GoogleGenAI } from "@google/genai";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createGeminiBatchLister } from "../../src/providers/gemini/gemini-list.js";
import { createProviderHealth } from "../../src/providers/provider-health.js";
import { createStatusClient } from "../../src/providers/status-client.js";
import { GeminiFake } from "../fakes/gemini-fake.js";
import { geminiBatch } from "../fakes/gemini-fixtures.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { adapterFor } from "./helpers/adapter.js";
import {
  closedPortUrl,
  jobsAgo,
  type ListerSubject,
  listerContract,
  sweep,
} from "./helpers/lister-contract.js";

const fake = new GeminiFake();
let base: string;
let deadUrl: string;
let restoreFetch: () => void;

beforeAll(async () => {
  restoreFetch = loopbackOnly();
  base = await fake.listen();
  deadUrl = await closedPortUrl();
});
afterAll(async () => {
  await fake.close();
  restoreFetch();
});
beforeEach(() => fake.objects.clear());

const lister = (baseUrl = base) =>
  createGeminiBatchLister(
    createStatusClient({
      provider: "gemini",
      baseUrl,
      headers: { "x-goog-api-key": fake.apiKey },
      health: createProviderHealth(),
    }),
    "v1beta",
  );

function seedBatch(id: string, createdAt: number, displayName: string): void {
  const batch = geminiBatch(id, "BATCH_STATE_RUNNING");
  const metadata = {
    ...(batch.metadata as object),
    createTime: new Date(createdAt).toISOString(),
    displayName,
  };
  fake.set(id, { ...batch, metadata });
}

const subject = (): ListerSubject => ({
  server: fake.server,
  kind: "batch",
  pageSize: 100,
  ordered: false,
  taggable: true,
  deadUrl,
  staleCursor: "Z29uZQ",
  seed(jobs) {
    for (const job of jobs)
      seedBatch(
        `batches/${job.id}`,
        job.createdAt,
        job.tag === undefined ? "nightly-eval" : `nightly-eval finality_intent=${job.tag}`,
      );
  },
  lister,
  listedId: (id) => `batches/${id}`,
  listCalls: () => fake.listCalls,
});

describe("Gemini batches list (GET /v1beta/batches)", () => {
  listerContract(subject);

  it("reads every page whatever the order, and only jobs created since the last sweep", async () => {
    // Names sort in an order unrelated to creation: a newest-first shortcut would miss "b-late".
    seedBatch("batches/a-old", Date.now() - 3_600_000, "x");
    seedBatch("batches/z-old", Date.now() - 3_600_000, "x");
    const first = await sweep(lister(), null, 0);
    expect(first.jobs.map((job) => job.id).sort()).toEqual(["batches/a-old", "batches/z-old"]);
    const settled = await sweep(lister(), first.resume, 0);
    for (let i = 0; i < 150; i++) seedBatch(`batches/c${i}`, Date.now() - 7_200_000, "x");
    seedBatch("batches/zz-new", Date.now(), "x");
    const second = await sweep(lister(), settled.resume, Date.now() - 48 * 3_600_000);
    // The two at the mark are read again (OVERLAP_MS); the 150 older ones, on two pages, are not.
    expect(second.jobs.map((job) => job.id)).toEqual(["batches/a-old", "batches/z-old", "batches/zz-new"]);
  });

  it("a job that lands on a page already read, while a newer one comes later, is found next sweep", async () => {
    const now = Date.now();
    for (let i = 0; i < 150; i++) seedBatch(`batches/m${String(i).padStart(3, "0")}`, now - 3_600_000, "x");
    const page1 = await lister().list({ resume: null, sinceMs: 0 }, AbortSignal.timeout(5000));
    if (page1.kind !== "page") throw new Error(page1.error);
    // Created during the sweep: "a-mid" sorts onto page 1, already read; "z-mid", newer, onto page 2.
    seedBatch("batches/a-mid", now - 600_000, "x");
    seedBatch("batches/z-mid", now, "x");
    const rest = await sweep(lister(), page1.resume, 0);
    expect(rest.jobs.map((job) => job.id)).toContain("batches/z-mid");
    expect([...page1.jobs, ...rest.jobs].map((job) => job.id)).not.toContain("batches/a-mid");
    const next = await sweep(lister(), rest.resume, 0);
    expect(next.jobs.map((job) => job.id)).toContain("batches/a-mid");
  });

  it("an empty list is `{}` and ends the sweep", async () => {
    const result = await lister().list({ resume: null, sinceMs: 0 }, AbortSignal.timeout(5000));
    expect(result).toMatchObject({ kind: "page", jobs: [], done: true });
  });

  it("only the marked part of a display name is a tag", async () => {
    seedBatch("batches/plain", Date.now(), "finality_intentional run");
    seedBatch("batches/marked", Date.now() - 1000, "eval finality_intent=k-1 nightly");
    const run = await sweep(lister(), null, 0);
    expect(Object.fromEntries(run.jobs.map((job) => [job.id, job.tag]))).toEqual({
      "batches/plain": undefined,
      "batches/marked": "k-1",
    });
  });

  it("the adapter lists batches only: operations and interactions need intents", async () => {
    seedBatch("batches/wired", Date.now(), "x");
    const adapter = adapterFor("gemini", { type: "gemini", baseUrl: base, apiKey: fake.apiKey });
    expect(adapter.lister?.kinds).toEqual(["batch"]);
    const page = await adapter.lister?.list({ resume: null, sinceMs: 0 }, AbortSignal.timeout(5000));
    expect(page).toMatchObject({ kind: "page", jobs: [{ id: "batches/wired", kind: "batch" }], done: true });
  });

  it("the fake's list is what the official SDK pages through", async () => {
    const seeded = jobsAgo("sdk", 45, 60_000);
    subject().seed(seeded);
    const ai = new GoogleGenAI({ apiKey: fake.apiKey, httpOptions: { baseUrl: base }, apiVersion: "v1beta" });
    const seen: string[] = [];
    for await (const batch of await ai.batches.list({ config: { pageSize: 20 } }))
      seen.push(String(batch.name));
    expect(seen.sort()).toEqual(seeded.map((job) => `batches/${job.id}`).sort());
  });
});
