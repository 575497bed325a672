import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ProviderConfigOf } from "../../src/config/config-schema.js";
import { providerSchema } from "../../src/config/provider-config-schema.js";
import { createBedrockAdapter } from "../../src/providers/bedrock/bedrock-adapter.js";
import { createProviderHealth } from "../../src/providers/provider-health.js";
import { nodeVerifiers } from "../../src/webhooks/node-verifiers.js";
import { BedrockFake } from "../fakes/bedrock-fake.js";
import { bedrockJob, jobArn } from "../fakes/bedrock-fixtures.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import {
  closedPortUrl,
  jobsAgo,
  type ListerSubject,
  listerContract,
  sweep,
} from "./helpers/lister-contract.js";

const fake = new BedrockFake();
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
beforeEach(() => fake.jobs.clear());

const config = (baseUrl = base) =>
  providerSchema.parse({
    type: "bedrock",
    region: fake.region,
    baseUrl,
    accessKeyId: fake.accessKeyId,
    secretAccessKey: fake.secretAccessKey,
  }) as ProviderConfigOf<"bedrock">;

const lister = (baseUrl = base) => {
  const adapter = createBedrockAdapter("bedrock", config(baseUrl), {
    now: Date.now,
    health: createProviderHealth(),
    verifiers: nodeVerifiers,
  });
  if (adapter.lister === undefined) throw new Error("no lister");
  return adapter.lister;
};

const subject = (): ListerSubject => ({
  server: fake.server,
  kind: "model_invocation_job",
  pageSize: 100,
  ordered: true,
  taggable: true,
  deadUrl,
  staleCursor: Buffer.from("gone").toString("base64url"),
  seed(jobs) {
    for (const job of jobs) {
      const { clientRequestToken: _none, ...untagged } = bedrockJob(job.id, "InProgress", {
        submitTime: new Date(job.createdAt).toISOString(),
      });
      fake.set(job.tag === undefined ? untagged : { ...untagged, clientRequestToken: job.tag });
    }
  },
  lister,
  listedId: (id) => jobArn(id),
  listCalls: () => fake.listCalls,
});

describe("Bedrock model invocation jobs list (GET /model-invocation-jobs)", () => {
  listerContract(subject);

  it("asks for the newest first, 100 a page, with every request signed", async () => {
    subject().seed(jobsAgo("n", 3, 60_000));
    const run = await sweep(lister(), null, 0);
    expect(run.jobs.map((job) => job.id)).toEqual(["n0", "n1", "n2"].map((id) => jobArn(id)));
    const call = fake.server.seen.filter((request) => request.path === "/model-invocation-jobs").at(-1);
    expect(Object.fromEntries(call?.query ?? [])).toEqual({
      maxResults: "100",
      sortBy: "CreationTime",
      sortOrder: "Descending",
    });
    expect(call?.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFAKEBEDROCK00001\//);
  });

  it("a summary without jobArn or submitTime fails the page rather than being taken in part", async () => {
    fake.server.failNext = {
      status: 200,
      count: 1,
      body: { invocationJobSummaries: [{ jobArn: jobArn("x"), status: "InProgress" }] },
    };
    const result = await lister().list({ resume: null, sinceMs: 0 }, AbortSignal.timeout(5000));
    expect(result).toMatchObject({
      kind: "failed",
      error: expect.stringMatching(/without jobArn or submitTime/),
    });
  });
});
