import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { ProviderConfigOf } from "../../src/config/config-schema.js";
import { providerSchema } from "../../src/config/provider-config-schema.js";
import { createProviderHealth } from "../../src/providers/provider-health.js";
import { createVertexAdapter } from "../../src/providers/vertex/vertex-adapter.js";
import { nodeVerifiers } from "../../src/webhooks/node-verifiers.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { VertexFake } from "../fakes/vertex-fake.js";
import { PROJECT_NUMBER, vertexJob, vertexJobName } from "../fakes/vertex-fixtures.js";
import { closedPortUrl, type ListerSubject, listerContract, sweep } from "./helpers/lister-contract.js";

const fake = new VertexFake();
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

const lister = (baseUrl = base) => {
  const config = providerSchema.parse({
    type: "vertex",
    project: PROJECT_NUMBER,
    location: "us-central1",
    baseUrl,
    serviceAccountKey: JSON.stringify(fake.keyFile()),
  }) as ProviderConfigOf<"vertex">;
  const adapter = createVertexAdapter("vertex", config, {
    now: Date.now,
    health: createProviderHealth(),
    verifiers: nodeVerifiers,
  });
  if (adapter.lister === undefined) throw new Error("no lister");
  return adapter.lister;
};

const subject = (): ListerSubject => ({
  server: fake.server,
  kind: "batch_prediction",
  pageSize: 100,
  ordered: false,
  taggable: true,
  deadUrl,
  staleCursor: Buffer.from("gone").toString("base64url"),
  seed(jobs) {
    for (const job of jobs)
      fake.set(
        vertexJob(job.id, "JOB_STATE_RUNNING", {
          createTime: new Date(job.createdAt).toISOString(),
          ...(job.tag === undefined ? {} : { labels: { team: "evals", finality_intent: job.tag } }),
        }),
      );
  },
  lister,
  listedId: (id) => vertexJobName(id),
  listCalls: () => fake.listCalls,
});

describe("Vertex AI batch prediction jobs list", () => {
  listerContract(subject);

  it("lists the configured project and location only, and passes each job's state on", async () => {
    fake.set(vertexJob("here", "JOB_STATE_SUCCEEDED", { createTime: new Date().toISOString() }));
    fake.set({
      ...vertexJob("there", "JOB_STATE_RUNNING", { createTime: new Date().toISOString() }),
      name: vertexJobName("there", "europe-west4"),
    });
    const run = await sweep(lister(), null, 0);
    expect(run.jobs).toEqual([
      expect.objectContaining({
        id: vertexJobName("here"),
        kind: "batch_prediction",
        state: "succeeded",
        rawState: "JOB_STATE_SUCCEEDED",
      }),
    ]);
    const call = fake.server.seen.filter((request) => request.path.endsWith("/batchPredictionJobs")).at(-1);
    expect(call?.path).toBe(`/v1/projects/${PROJECT_NUMBER}/locations/us-central1/batchPredictionJobs`);
    expect(call?.headers.authorization).toMatch(/^Bearer ya29\.fake-/);
  });
});
