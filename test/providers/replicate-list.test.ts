import Replicate from "replicate";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createProviderHealth } from "../../src/providers/provider-health.js";
import { createReplicateLister } from "../../src/providers/replicate/replicate-list.js";
import { createStatusClient } from "../../src/providers/status-client.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { ReplicateFake } from "../fakes/replicate-fake.js";
import { prediction } from "../fakes/replicate-fixtures.js";
import { adapterFor } from "./helpers/adapter.js";
import {
  closedPortUrl,
  jobsAgo,
  type ListerSubject,
  listerContract,
  sweep,
} from "./helpers/lister-contract.js";

const fake = new ReplicateFake();
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
beforeEach(() => fake.predictions.clear());

const lister = (baseUrl = base) =>
  createReplicateLister(
    createStatusClient({
      provider: "replicate",
      baseUrl,
      headers: { authorization: `Bearer ${fake.apiKey}` },
      health: createProviderHealth(),
    }),
  );

const subject = (): ListerSubject => ({
  server: fake.server,
  kind: "prediction",
  pageSize: 100,
  ordered: true,
  // The submitter's webhook URL (with ?finality_intent=...) is not part of a listed prediction.
  taggable: false,
  deadUrl,
  staleCursor: "cursor=Z29uZQ",
  seed(jobs) {
    for (const job of jobs) {
      const webhook = `https://app.example/hooks/replicate${job.tag === undefined ? "" : `?finality_intent=${job.tag}`}`;
      fake.set(
        prediction(job.id, "processing", { created_at: new Date(job.createdAt).toISOString(), webhook }),
      );
    }
  },
  lister,
  listCalls: () => fake.listCalls,
});

describe("Replicate predictions list (GET /v1/predictions)", () => {
  listerContract(subject);

  it("follows `next` by its query only, sent to the configured base URL", async () => {
    subject().seed(jobsAgo("p", 150, 60_000));
    const run = await sweep(lister(), null, 0);
    expect(run.jobs).toHaveLength(150);
    const calls = fake.server.seen.filter((request) => request.path === "/v1/predictions").slice(-2);
    expect(calls[0]?.query.get("cursor")).toBeNull();
    expect(calls[1]?.query.get("cursor")).toBe(Buffer.from("p99").toString("base64url"));
  });

  it("a `next` that is not a URL is a failure, not a guess", async () => {
    fake.server.failNext = { status: 200, count: 1, body: { next: "page-2", previous: null, results: [] } };
    const result = await lister().list({ resume: null, sinceMs: 0 }, AbortSignal.timeout(5000));
    expect(result).toMatchObject({ kind: "failed", error: expect.stringMatching(/not a URL/) });
  });

  it("the adapter lists predictions when it has a key, and cannot without one", async () => {
    subject().seed([{ id: "wired", createdAt: Date.now() }]);
    const webhook = { secrets: [fake.secret] };
    const withKey = adapterFor("replicate", {
      type: "replicate",
      baseUrl: base,
      apiKey: fake.apiKey,
      webhook,
    });
    expect(withKey.lister?.kinds).toEqual(["prediction"]);
    const page = await withKey.lister?.list({ resume: null, sinceMs: 0 }, AbortSignal.timeout(5000));
    expect(page).toMatchObject({ kind: "page", jobs: [{ id: "wired", kind: "prediction" }], done: true });
    expect(adapterFor("replicate", { type: "replicate", baseUrl: base, webhook }).lister).toBeUndefined();
  });

  it("the fake's list is what the official client pages through", async () => {
    const seeded = jobsAgo("sdk", 230, 60_000);
    subject().seed(seeded);
    const replicate = new Replicate({ auth: fake.apiKey, baseUrl: base });
    const seen: string[] = [];
    for await (const page of replicate.paginate(replicate.predictions.list))
      seen.push(...page.map((p) => p.id));
    expect(seen).toEqual(seeded.map((job) => job.id));
  });
});
