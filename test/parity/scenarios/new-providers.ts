import { expect } from "vitest";
import { bedrockJob, jobArn } from "../../fakes/bedrock-fixtures.js";
import { FalFake, type FalRequest } from "../../fakes/fal-fake.js";
import { PROJECT_NUMBER, vertexJob, vertexJobName } from "../../fakes/vertex-fixtures.js";
import { SECRET } from "../../http/helpers/webhooks.js";
import type { Running } from "../deployments.js";
import {
  deliveriesFor,
  eventually,
  expectOncePerKey,
  type Fakes,
  json,
  post,
  type Scenario,
} from "../scenario.js";

const FAL = "np-fal";
const BEDROCK = "np-bedrock";
const VERTEX = "np-vertex";
const MISTRAL = "np-mistral";
const PROVIDERS = [FAL, BEDROCK, VERTEX, MISTRAL];
const FAL_APP = "fal-ai/flux/dev";
const DISCOVER = { enabled: true, intervalSeconds: 1 };

/**
 * Created three days ago: older than discovery's lookback (48 hours), so never listed, and a job
 * with it settles by polling alone. A job created now is listed, and adopted by discovery.
 */
const OLD_MS = () => Date.now() - 3 * 86_400_000;

// Ids in each provider's own shape (Bedrock's job id part of an ARN, Vertex's numeric, Mistral's UUID).
const BEDROCK_POLLED = "polled0001ab";
const BEDROCK_FOUND = "found00001cd";
const VERTEX_POLLED = "4000000000000000001";
const VERTEX_FOUND = "4000000000000000002";
const MISTRAL_REGISTERED = "6b9c1f5e-0000-4000-8000-00000000a001";
const MISTRAL_FOUND = "6b9c1f5e-0000-4000-8000-00000000a002";

/** One job: where it lives, how it enters Finality, and the state it must settle in. */
interface Case {
  provider: string;
  id: string;
  via: "webhook" | "registered" | "discovered";
  state: "succeeded" | "failed";
}
const CASES: Case[] = [
  { provider: FAL, id: "fal-hook", via: "webhook", state: "succeeded" },
  { provider: FAL, id: "fal-polled", via: "registered", state: "succeeded" },
  { provider: FAL, id: "fal-found", via: "discovered", state: "failed" },
  { provider: BEDROCK, id: jobArn(BEDROCK_POLLED), via: "registered", state: "succeeded" },
  { provider: BEDROCK, id: jobArn(BEDROCK_FOUND), via: "discovered", state: "failed" },
  { provider: VERTEX, id: vertexJobName(VERTEX_POLLED), via: "registered", state: "succeeded" },
  { provider: VERTEX, id: vertexJobName(VERTEX_FOUND), via: "discovered", state: "failed" },
  { provider: MISTRAL, id: MISTRAL_REGISTERED, via: "registered", state: "succeeded" },
  { provider: MISTRAL, id: MISTRAL_FOUND, via: "discovered", state: "failed" },
];

const jobPath = (provider: string, id: string) => `/v1/jobs/${provider}/${encodeURIComponent(id)}`;

const falRequest = (
  id: string,
  status: FalRequest["status"],
  sentAtMs: number,
  extra: Partial<FalRequest> = {},
) => ({
  id,
  endpoint: FAL_APP,
  status,
  sentAt: new Date(sentAtMs).toISOString(),
  ...extra,
});

/** Every job at its fake as still running (the webhook job exists only in its webhook). */
function atWork(vendors: Fakes["vendors"]) {
  const now = Date.now();
  vendors.fal.set(falRequest("fal-polled", "IN_PROGRESS", OLD_MS()));
  vendors.fal.set(falRequest("fal-found", "IN_QUEUE", now));
  vendors.bedrock.set(
    bedrockJob(BEDROCK_POLLED, "InProgress", { submitTime: new Date(OLD_MS()).toISOString() }),
  );
  vendors.bedrock.set(bedrockJob(BEDROCK_FOUND, "InProgress", { submitTime: new Date(now).toISOString() }));
  vendors.vertex.set(
    vertexJob(VERTEX_POLLED, "JOB_STATE_RUNNING", { createTime: new Date(OLD_MS()).toISOString() }),
  );
  vendors.vertex.set(
    vertexJob(VERTEX_FOUND, "JOB_STATE_RUNNING", { createTime: new Date(now).toISOString() }),
  );
  mistral(vendors, MISTRAL_REGISTERED, "RUNNING", OLD_MS());
  mistral(vendors, MISTRAL_FOUND, "RUNNING", now);
}

/** Every job at its fake in its terminal state. */
function ended(vendors: Fakes["vendors"]) {
  const now = Date.now();
  vendors.fal.set(
    falRequest("fal-polled", "COMPLETED", OLD_MS(), {
      payload: { seed: 9 },
      endedAt: new Date(now).toISOString(),
    }),
  );
  vendors.fal.set(
    falRequest("fal-found", "COMPLETED", now - 5_000, {
      error: { message: "Request timed out", type: "request_timeout" },
      endedAt: new Date(now).toISOString(),
    }),
  );
  vendors.bedrock.set(
    bedrockJob(BEDROCK_POLLED, "Completed", { submitTime: new Date(OLD_MS()).toISOString() }),
  );
  vendors.bedrock.set(
    bedrockJob(BEDROCK_FOUND, "Failed", { submitTime: new Date(now - 5_000).toISOString() }),
  );
  vendors.vertex.set(
    vertexJob(VERTEX_POLLED, "JOB_STATE_SUCCEEDED", { createTime: new Date(OLD_MS()).toISOString() }),
  );
  vendors.vertex.set(
    vertexJob(VERTEX_FOUND, "JOB_STATE_FAILED", { createTime: new Date(now - 5_000).toISOString() }),
  );
  mistral(vendors, MISTRAL_REGISTERED, "SUCCESS", OLD_MS());
  mistral(vendors, MISTRAL_FOUND, "FAILED", now - 5_000);
}

function mistral(vendors: Fakes["vendors"], id: string, status: string, createdMs: number) {
  vendors.compat.mistralJob(id, status);
  const job = vendors.compat.mistral.get(id) as Record<string, unknown>;
  job.created_at = Math.floor(createdMs / 1000);
}

const okWebhook = (id: string) => ({
  request_id: id,
  gateway_request_id: id,
  status: "OK",
  payload: { images: [{ url: "https://fal.media/files/x.png", content_type: "image/png" }], seed: 7 },
});

async function deliver(running: Running, delivery: { body: string; headers: Record<string, string> }) {
  const response = await running.fetch(`/webhooks/${FAL}`, {
    method: "POST",
    headers: delivery.headers,
    body: delivery.body,
  });
  const text = await response.text();
  return { status: response.status, text, type: response.headers.get("content-type") ?? "" };
}

async function sources(running: Running, provider: string, id: string): Promise<string[]> {
  const events = await json<{ items: { source: string }[] }>(running, `${jobPath(provider, id)}/events`);
  expect(events.status).toBe(200);
  return events.body.items.map((e) => e.source);
}

interface FeedPage {
  items: { id: string }[];
  cursor: string | null;
}

/** The ids of the settlement feed for `provider`, read in pages of two, in the feed's order. */
async function feedIds(running: Running, provider: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (;;) {
    const after: string = cursor === null ? "" : `&after=${encodeURIComponent(cursor)}`;
    const page: { status: number; body: FeedPage } = await json<FeedPage>(
      running,
      `/v1/settlements?provider=${provider}&limit=2${after}`,
    );
    expect(page.status).toBe(200);
    if (page.body.items.length === 0) return ids;
    ids.push(...page.body.items.map((s) => s.id));
    cursor = page.body.cursor;
  }
}

/**
 * The providers that speak their vendor's own API, each settling from its fake: fal by a webhook
 * signed with Ed25519 (checked against the fake's published key set; delivered twice; a forged one
 * refused) and by polling its queue; Amazon Bedrock (SigV4), Vertex AI (a service account's token)
 * and Mistral's OpenAI-compatible batches by discovery and by polling. A registered job is
 * created before discovery's lookback, so polling alone settles it; a listed one is adopted while
 * running and settles by the poll once it ends. Each job settles once in the feed, its effect once.
 */
export const newProviders: Scenario = {
  name: "new-providers",
  config: ({ receiver, vendors }) => ({
    providers: {
      [FAL]: {
        type: "fal",
        baseUrl: vendors.fal.server.url,
        platformBaseUrl: `${vendors.fal.server.url}/v1`,
        apiKey: vendors.fal.apiKey,
        app: FAL_APP,
        webhook: { jwksUrl: vendors.fal.jwksUrl, userIds: [vendors.fal.userId] },
        discover: DISCOVER,
      },
      [BEDROCK]: {
        type: "bedrock",
        region: vendors.bedrock.region,
        baseUrl: vendors.bedrock.server.url,
        accessKeyId: vendors.bedrock.accessKeyId,
        secretAccessKey: vendors.bedrock.secretAccessKey,
        discover: DISCOVER,
      },
      [VERTEX]: {
        type: "vertex",
        project: PROJECT_NUMBER,
        location: "us-central1",
        baseUrl: vendors.vertex.server.url,
        serviceAccountKey: JSON.stringify(vendors.vertex.keyFile()),
        discover: DISCOVER,
      },
      [MISTRAL]: {
        type: "openai",
        compat: "mistral",
        baseUrl: `${vendors.compat.server.url}/v1`,
        apiKey: vendors.compat.apiKey,
        discover: DISCOVER,
      },
    },
    effects: [{ name: "new-provider-settled", url: receiver.url, secret: SECRET, providers: PROVIDERS }],
  }),
  async run(running, { receiver, vendors }) {
    atWork(vendors);
    for (const job of CASES.filter((c) => c.via === "registered")) {
      const registered = await post(running, "/v1/jobs", { provider: job.provider, id: job.id });
      expect(registered.status, JSON.stringify(registered.body)).toBe(201);
    }

    // fal's webhook: signed by the fake's newest key, delivered twice (fal retries); a forged one refused.
    const hook = vendors.fal.webhook(okWebhook("fal-hook"));
    for (let i = 0; i < 2; i++) expect((await deliver(running, hook)).status).toBe(200);
    const forged = await deliver(
      running,
      vendors.fal.webhook(okWebhook("fal-forged"), { key: FalFake.strangerKey() }),
    );
    expect(forged.status, forged.text).toBe(401);
    expect(forged.type).toMatch(/^application\/problem\+json/);
    expect((await json(running, jobPath(FAL, "fal-forged"))).status).toBe(404);

    // Registered and listed jobs are known (and polled) while they still run.
    await eventually(running, async () => {
      for (const job of CASES.filter((c) => c.via !== "webhook"))
        expect((await json(running, jobPath(job.provider, job.id))).body, job.id).toMatchObject({
          state: expect.stringMatching(/^(pending|running)$/),
        });
    });
    ended(vendors);
    await eventually(running, async () => {
      for (const job of CASES)
        expect((await json(running, jobPath(job.provider, job.id))).body, job.id).toMatchObject({
          state: job.state,
          settledBy: job.via === "webhook" ? "webhook" : "reconcile",
        });
    });
    expect((await json(running, jobPath(FAL, "fal-hook"))).body).toMatchObject({ result: { seed: 7 } });
    expect((await json(running, jobPath(FAL, "fal-polled"))).body).toMatchObject({ result: { seed: 9 } });
    for (const job of CASES.filter((c) => c.via !== "webhook")) {
      const seen = await sources(running, job.provider, job.id);
      if (job.via === "discovered") expect(seen, job.id).toContain("discovery");
      else expect(seen, job.id).not.toContain("discovery");
    }

    // Each settled once in the feed (read in pages), each effect once.
    for (const provider of PROVIDERS)
      expect((await feedIds(running, provider)).sort(), provider).toEqual(
        CASES.filter((c) => c.provider === provider)
          .map((c) => c.id)
          .sort(),
      );
    await receiver.until(() => deliveriesFor(receiver, PROVIDERS).length >= CASES.length);
    expectOncePerKey(deliveriesFor(receiver, PROVIDERS), CASES.length);
    expect(
      deliveriesFor(receiver, PROVIDERS)
        .map((d) => `${d.body.job.provider} ${d.body.job.id} ${d.body.job.state}`)
        .sort(),
    ).toEqual(CASES.map((c) => `${c.provider} ${c.id} ${c.state}`).sort());
  },
};
