import fc from "fast-check";
import { exportPKCS8, generateKeyPair } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import { rankOf } from "../../src/core/states.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createReconciler } from "../../src/engine/reconciler.js";
import { FalFake } from "../fakes/fal-fake.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { standardWebhook } from "../fakes/webhook-delivery.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { adapterFor } from "./helpers/adapter.js";
import { providerApp } from "./helpers/provider-app.js";
import { AnswerServer } from "./schema-answers/answer-server.js";
import { anthropicBatches } from "./schema-answers/anthropic-answers.js";
import { bedrockJobs } from "./schema-answers/bedrock-answers.js";
import { type AnswerSource, answerSequence, type DrawnAnswer } from "./schema-answers/drawn-answer.js";
import { falStatuses, falWebhookBody } from "./schema-answers/fal-answers.js";
import { geminiBatches, geminiOperations } from "./schema-answers/gemini-answers.js";
import { openaiBatches, openaiResponses } from "./schema-answers/openai-answers.js";
import { replicatePredictions } from "./schema-answers/replicate-answers.js";
import { vertexJobs } from "./schema-answers/vertex-answers.js";

// Issue 33: no job is stranded by any answer a provider's schema allows. Each run registers one
// job and polls it through the real adapter, reconciler and reducer on SQLite, the provider
// answering a drawn lifetime: open answers (documented or unknown statuses, any timestamps),
// then its ended answer. Defect 6 was one such answer: an `expired` batch whose `created_at`
// read as 1971 stayed pending for good.

const POLICY = { minMs: 1_000, maxMs: 1_000, stuckAfterMs: 3_600_000 };
const RUNS = 40;
const server = new AnswerServer();
let base: string;
let restoreFetch: () => void;
/** A service account key for the Vertex adapter; the answer server stands in for its token URI. */
let vertexKey: string;

beforeAll(async () => {
  restoreFetch = loopbackOnly();
  base = await server.listen();
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  vertexKey = JSON.stringify({
    client_email: "drawn@p.iam.gserviceaccount.com",
    private_key: await exportPKCS8(privateKey),
    token_uri: `${base}/token`,
  });
  server.answer("/token", { access_token: "ya29.drawn", expires_in: 3600, token_type: "Bearer" });
});
afterAll(async () => {
  await server.close();
  restoreFetch();
});

interface Subject {
  provider: string;
  config: () => Record<string, unknown>;
  source: AnswerSource;
  /** A job id of the object's kind, and the path its status is read from. */
  ids: fc.Arbitrary<string>;
  path: (id: string) => string;
  /** Other paths the poller reads for this id (fal's result endpoint), answered before the run. */
  also?: (id: string) => [string, unknown][];
}

const suffix = fc.stringMatching(/^[A-Za-z0-9]{4,12}$/);
const SUBJECTS: Subject[] = [
  {
    provider: "openai-responses",
    config: () => ({ type: "openai", baseUrl: `${base}/v1`, apiKey: "sk-test" }),
    source: openaiResponses,
    ids: suffix.map((s) => `resp_${s}`),
    path: (id) => `/v1/responses/${id}`,
  },
  {
    provider: "openai-batches",
    config: () => ({ type: "openai", baseUrl: `${base}/v1`, apiKey: "sk-test" }),
    source: openaiBatches,
    ids: suffix.map((s) => `batch_${s}`),
    path: (id) => `/v1/batches/${id}`,
  },
  {
    provider: "anthropic-batches",
    config: () => ({ type: "anthropic", baseUrl: base, apiKey: "sk-ant-test" }),
    source: anthropicBatches,
    ids: suffix.map((s) => `msgbatch_${s}`),
    path: (id) => `/v1/messages/batches/${id}`,
  },
  {
    provider: "gemini-batches",
    config: () => ({ type: "gemini", baseUrl: base, apiKey: "gm-test" }),
    source: geminiBatches,
    ids: suffix.map((s) => `batches/${s}`),
    path: (id) => `/v1beta/${id}`,
  },
  {
    provider: "gemini-operations",
    config: () => ({ type: "gemini", baseUrl: base, apiKey: "gm-test" }),
    source: geminiOperations,
    ids: suffix.map((s) => `models/veo-3.0-generate-001/operations/${s}`),
    path: (id) => `/v1beta/${id}`,
  },
  {
    provider: "replicate",
    config: () => ({ type: "replicate", baseUrl: `${base}/v1`, apiKey: "r8-test" }),
    source: replicatePredictions,
    ids: suffix.map((s) => `pred${s}`),
    path: (id) => `/v1/predictions/${id}`,
  },
  {
    provider: "bedrock",
    config: () => ({
      type: "bedrock",
      region: "us-east-1",
      baseUrl: base,
      accessKeyId: "AKIA",
      secretAccessKey: "s",
    }),
    source: bedrockJobs,
    ids: fc
      .stringMatching(/^[a-z0-9]{12}$/)
      .map((s) => `arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/${s}`),
    path: (id) => `/model-invocation-job/${encodeURIComponent(id)}`,
  },
  {
    provider: "vertex",
    config: () => ({
      type: "vertex",
      project: "p",
      location: "us-central1",
      baseUrl: base,
      serviceAccountKey: vertexKey,
    }),
    source: vertexJobs,
    ids: fc
      .stringMatching(/^[0-9]{6,19}$/)
      .map((s) => `projects/123/locations/us-central1/batchPredictionJobs/${s}`),
    path: (id) => `/v1/${id}`,
  },
  {
    provider: "fal",
    config: () => ({ type: "fal", baseUrl: base, apiKey: "fal-test", app: "fal-ai/flux/dev" }),
    source: falStatuses,
    ids: fc.uuid(),
    path: (id) => `/fal-ai/flux/requests/${id}/status`,
    also: (id) => [[`/fal-ai/flux/requests/${id}`, { images: [], seed: 1 }]],
  },
];

/** The state a job is in after `answers`: the highest-ranked documented state so far. */
function expectedAfter(answers: DrawnAnswer[]): string {
  let state = "pending";
  for (const { expected } of answers) {
    if (rankOf(state) === 2) break;
    if (expected !== null && rankOf(expected) >= rankOf(state)) state = expected;
  }
  return state;
}

/** Polls one job through its lifetime of answers; checks the state after every poll. */
async function lifetime(subject: Subject, id: string, answers: DrawnAnswer[]): Promise<void> {
  const clock = manualClock();
  const finality = createFinality({ store: { sqlite: ":memory:" }, clock, graceSeconds: 0 });
  const adapter = adapterFor(subject.provider, subject.config(), { now: clock.now });
  const polls: string[] = [];
  const reconciler = createReconciler(finality, {
    providers: { [subject.provider]: { ...POLICY, poller: adapter.poller ?? undefined } },
    random: () => 0,
    onPoll: (poll) => polls.push(poll.error ? `${poll.result}: ${poll.error}` : poll.result),
  });
  try {
    for (const [path, body] of subject.also?.(id) ?? []) server.answer(path, body);
    await finality.register({ provider: subject.provider, id });
    let rank = 0;
    for (const [i, answer] of answers.entries()) {
      server.answer(subject.path(id), answer.body);
      clock.advance(POLICY.maxMs);
      const polled = await reconciler.runOnce();
      const job = await finality.getJob({ provider: subject.provider, id });
      const expected = expectedAfter(answers.slice(0, i + 1));
      const shown = { answer: answer.body, polls };
      // Polled while open; once ended, not polled again (it is settled, nothing to ask).
      expect(polled, JSON.stringify(shown)).toBe(rankOf(expectedAfter(answers.slice(0, i))) === 2 ? 0 : 1);
      expect(
        polls.every((result) => result === "observed"),
        JSON.stringify(shown),
      ).toBe(true);
      expect(job?.state, JSON.stringify(shown)).toBe(expected);
      expect(rankOf(job?.state ?? "")).toBeGreaterThanOrEqual(rank);
      rank = rankOf(job?.state ?? "");
    }
    expect(rank).toBe(2);
  } finally {
    await reconciler.stop();
    await finality.close();
  }
}

describe("no job is stranded by any answer the provider's schema allows (polling)", () => {
  it.each(SUBJECTS.map((s) => [s.provider, s] as const))("%s", async (_name, subject) => {
    await fc.assert(
      fc.asyncProperty(
        subject.ids.chain((id) => answerSequence(subject.source, id).map((answers) => ({ id, answers }))),
        ({ id, answers }) => lifetime(subject, id, answers),
      ),
      { numRuns: RUNS },
    );
  });
});

describe("no job is stranded by any body the provider's schema allows (webhooks)", () => {
  // Replicate's webhooks carry the whole prediction; the others send thin events and read the
  // object through the status API, which the polling properties above cover.
  it("replicate: a drawn lifetime of signed prediction webhooks ends in its documented state", async () => {
    const app = await providerApp({ replicate: { type: "replicate", webhook: { secrets: [SECRET] } } });
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(answerSequence(replicatePredictions, "drawn"), async (answers) => {
          // A new job each run (one ledger for all runs; a replayed shrink must not meet an old one).
          const id = `pred-hook-${++run}`;
          await app.register("replicate", id);
          let rank = 0;
          for (const [i, answer] of answers.entries()) {
            const body = { ...answer.body, id };
            const posted = await app.post("replicate", standardWebhook(SECRET, body));
            expect(posted.status, JSON.stringify(posted.body)).toBe(200);
            const job = await app.job("replicate", id);
            expect(job.state, JSON.stringify(body)).toBe(expectedAfter(answers.slice(0, i + 1)));
            expect(rankOf(String(job.state))).toBeGreaterThanOrEqual(rank);
            rank = rankOf(String(job.state));
          }
          expect(rank).toBe(2);
        }),
        { numRuns: RUNS },
      );
    } finally {
      await app.close();
    }
  });
});

describe("fal: any webhook body its documents allow settles the request or is recorded unapplied", () => {
  // fal sends one webhook per request, when it is done; its request id is the delivery id.
  it("a drawn OK / ERROR / undocumented body, signed as fal signs", async () => {
    const fal = new FalFake();
    const jwksBase = await fal.listen();
    const app = await providerApp({
      fal: { type: "fal", webhook: { jwksUrl: `${jwksBase}/.well-known/jwks.json` } },
    });
    let run = 0;
    try {
      await fc.assert(
        fc.asyncProperty(
          fc.nat().chain(() => falWebhookBody(`fal-hook-${++run}`)),
          async ({ body, expected }) => {
            const id = String(body.request_id);
            await app.register("fal", id);
            const posted = await app.post("fal", fal.webhook(body));
            expect(posted.status, JSON.stringify(posted.body)).toBe(200);
            expect((await app.job("fal", id)).state, JSON.stringify(body)).toBe(expected ?? "pending");
          },
        ),
        { numRuns: RUNS },
      );
    } finally {
      await app.close();
      await fal.close();
    }
  });
});
