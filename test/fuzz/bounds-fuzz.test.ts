import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isTruncated } from "../../src/core/bounded-value.js";
import { isTimestampInBounds, TIMESTAMP_BOUNDS } from "../../src/core/bounds.js";
import { exceedsDepth, jsonSize, LIMITS } from "../../src/core/validation.js";
import type { Reconciler } from "../../src/engine/reconciler.js";
import { reconcilerFromConfig } from "../../src/host/from-config.js";
import { silentLogger } from "../../src/http/request-log.js";
import { createNodeProviders } from "../../src/providers/node-providers.js";
import { FakeServer, RawJson } from "../fakes/fake-server.js";
import { GeminiFake } from "../fakes/gemini-fake.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { OpenAIFake } from "../fakes/openai-fake.js";
import { ReplicateFake } from "../fakes/replicate-fake.js";
import { standardWebhook } from "../fakes/webhook-delivery.js";
import { engineOf } from "../helpers/engine.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { boundaryMillis, outcomeValueText, rfc3339Of } from "./arbitraries.js";
import { fuzzApp, InputCounter } from "./fuzz-app.js";

// Oversized and out-of-range values on every source: webhooks of each provider (Anthropic's carry
// no result without a fetch of a session: its event time is what is drawn), polls, the API's
// observation route and worker callbacks. Results and errors run from a few bytes to several MB,
// nest up to 20,000 levels and carry NUL bytes; timestamps sit at and beyond the bounds (years
// 2000-2200) and past what Date can hold. The properties:
// - never a 5xx, never a 413 for a body under the body limit (16 MB here);
// - a timestamp out of range in the sender's own format (the generic body, the API): a 400 and
//   nothing stored for the job;
// - a provider's own timestamp out of range (its webhooks, every poll answer): the state applies
//   all the same, and the job orders by no time outside the range (issue 33, defect 6);
// - otherwise the state is applied, and what is stored is bounded (at most the result limit, at
//   most 64 levels deep), marked `truncated` when it had to be cut.

const BODY_LIMIT = 16 * 1024 * 1024;
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);

const replicate = new ReplicateFake();
const openai = new OpenAIFake();
const gemini = new GeminiFake();
const genericAnswers = new Map<string, unknown>();
const generic = new FakeServer(
  (request) => {
    const answer = genericAnswers.get(decodeURIComponent(request.path.slice("/status/".length)));
    return answer === undefined ? null : { status: 200, body: answer };
  },
  () => null,
  () => ({ error: "not found" }),
);
const counter = new InputCounter();
let restoreFetch: () => void;
let t: Awaited<ReturnType<typeof fuzzApp>>;
let reconciler: Reconciler;

beforeAll(async () => {
  restoreFetch = loopbackOnly();
  const [replicateBase, openaiBase, geminiBase, genericBase] = await Promise.all([
    replicate.listen(),
    openai.listen(),
    gemini.listen(),
    generic.listen(),
  ]);
  t = await fuzzApp({
    bodyLimitBytes: BODY_LIMIT,
    providers: {
      replicate: {
        type: "replicate",
        baseUrl: `${replicateBase}/v1`,
        apiKey: replicate.apiKey,
        webhook: { secrets: [replicate.secret] },
      },
      openai: {
        type: "openai",
        baseUrl: `${openaiBase}/v1`,
        apiKey: openai.apiKey,
        webhook: { secrets: [SECRET] },
      },
      gemini: { type: "gemini", baseUrl: geminiBase, apiKey: gemini.apiKey, webhook: { secrets: [SECRET] } },
      anthropic: {
        type: "anthropic",
        baseUrl: "http://127.0.0.1:9",
        apiKey: "sk-ant-none",
        webhook: { secrets: [SECRET] },
      },
      mapped: {
        type: "generic",
        webhook: { secrets: [SECRET] },
        poll: {
          url: `${genericBase}/status/{id}`,
          paths: { state: "status", updateTime: "updated", result: "output", error: "failure" },
        },
      },
    },
  });
  reconciler = reconcilerFromConfig(t.finality, t.config, {
    logger: silentLogger,
    providers: createNodeProviders(t.config.providers, () => engineOf(t.finality).clock.now()),
  });
});
afterAll(async () => {
  console.log(counter.report("oversized and out-of-range values, every source"));
  await reconciler.stop();
  await t.close();
  await Promise.all([replicate.close(), openai.close(), gemini.close(), generic.close()]);
  restoreFetch();
});

let serial = 0;
const nextId = (prefix: string) => `${prefix}-${++serial}`;
const draw = fc.record({
  ms: boundaryMillis(TIMESTAMP_BOUNDS),
  result: outcomeValueText,
  error: outcomeValueText,
  failed: fc.boolean(),
});
type Draw = { ms: number; result: string; error: string; failed: boolean };

/** What the property asks of one input, whatever its source. */
async function expectBounded(
  source: string,
  key: { provider: string; id: string },
  status: number,
  timeInBounds: boolean,
  expectedState: string,
  /** Out-of-range times: `refused` (the sender's own format) or `adjusted` (a provider's time). */
  outOfRange: "refused" | "adjusted" = "refused",
): Promise<void> {
  counter.add(`${source} (${timeInBounds ? "time in range" : "time out of range"})`, status);
  const job = await t.finality.getJob(key);
  if (!timeInBounds && outOfRange === "refused") {
    expect(status, source).toBe(400);
    expect(job, source).toBeNull();
    return;
  }
  expect(status, source).toBe(200);
  expect(job?.state, source).toBe(expectedState);
  expectOrderedInRange(job?.maxUpdateTime, source);
  for (const value of [job?.result, job?.error]) expectStorable(value);
}

/** A job orders by no time outside the bounds, whatever time came. */
function expectOrderedInRange(maxUpdateTime: number | null | undefined, source: string): void {
  if (maxUpdateTime === null || maxUpdateTime === undefined) return;
  expect(isTimestampInBounds(maxUpdateTime), source).toBe(true);
}

function expectStorable(value: unknown): void {
  if (value === undefined || value === null) return;
  expect(exceedsDepth(value, LIMITS.jsonDepth)).toBe(false);
  const size = jsonSize(value) ?? Number.POSITIVE_INFINITY;
  expect(size).toBeLessThanOrEqual(LIMITS.resultBytes);
}

async function post(provider: string, body: string, headers: Record<string, string>): Promise<number> {
  const response = await t.app.request(`/webhooks/${provider}`, { method: "POST", headers, body });
  await response.arrayBuffer();
  return response.status;
}

/** Whether the time, as an RFC 3339 text sends it (whole milliseconds), is in range. */
const textInBounds = (ms: number) => isTimestampInBounds(Date.parse(rfc3339Of(ms)));

const json = (body: string) => ({ method: "POST", headers: { "content-type": "application/json" }, body });

describe("fuzzing every source with oversized and out-of-range values", () => {
  it("generic webhooks", async () => {
    await fc.assert(
      fc.asyncProperty(draw, async (d: Draw) => {
        const id = nextId("gw");
        const state = d.failed ? "failed" : "succeeded";
        const body = `{"jobId":"${id}","state":"${state}","updateTime":"${rfc3339Of(d.ms)}","result":${d.result},"error":${d.error}}`;
        const status = await post("acme", body, standardWebhook(SECRET, body).headers);
        await expectBounded("generic webhook", { provider: "acme", id }, status, textInBounds(d.ms), state);
      }),
      { numRuns: RUNS },
    );
  });

  it("Replicate webhooks (the whole prediction)", async () => {
    await fc.assert(
      fc.asyncProperty(draw, async (d: Draw) => {
        const id = nextId("rw");
        const status = d.failed ? "failed" : "succeeded";
        const body = `{"id":"${id}","status":"${status}","created_at":null,"completed_at":"${rfc3339Of(d.ms)}","output":${d.result},"error":${d.error},"metrics":${d.result}}`;
        const answer = await post("replicate", body, standardWebhook(replicate.secret, body).headers);
        const state = d.failed ? "failed" : "succeeded";
        await expectBounded(
          "Replicate webhook",
          { provider: "replicate", id },
          answer,
          textInBounds(d.ms),
          state,
          "adjusted",
        );
      }),
      { numRuns: RUNS },
    );
  });

  it("OpenAI thin webhooks (the fetched response carries the values)", async () => {
    await fc.assert(
      fc.asyncProperty(draw, async (d: Draw) => {
        const id = nextId("resp_fz");
        const seconds = Math.floor(d.ms / 1000);
        const status = d.failed ? "failed" : "completed";
        const object = `{"id":"${id}","object":"response","status":"${status}","created_at":${seconds},"output":${d.result},"error":${d.error}}`;
        openai.set(
          Object.assign(new RawJson(object) as unknown as Record<string, unknown>, {
            id,
            object: "response",
          }),
        );
        const delivery = openai.webhook(SECRET, d.failed ? "response.failed" : "response.completed", id);
        const answer = await post("openai", delivery.body, delivery.headers);
        const inBounds = seconds <= 0 || isTimestampInBounds(seconds * 1000);
        await expectBounded(
          "OpenAI webhook",
          { provider: "openai", id },
          answer,
          inBounds,
          d.failed ? "failed" : "succeeded",
          "adjusted",
        );
      }),
      { numRuns: RUNS },
    );
  });

  it("Gemini thin webhooks (the fetched batch carries the values; the event's own time too)", async () => {
    await fc.assert(
      fc.asyncProperty(draw, fc.boolean(), async (d: Draw, timeOnEvent) => {
        const id = `batches/${nextId("gb")}`;
        const state = d.failed ? "BATCH_STATE_FAILED" : "BATCH_STATE_SUCCEEDED";
        const objectTime = timeOnEvent ? "2026-01-01T00:00:00Z" : rfc3339Of(d.ms);
        const outcome = d.failed ? `"error":${d.error}` : `"response":${d.result}`;
        const object = `{"name":"${id}","done":true,"metadata":{"state":"${state}","updateTime":"${objectTime}","output":${d.result}},${outcome}}`;
        gemini.set(id, new RawJson(object) as unknown as Record<string, unknown>);
        const type = d.failed ? "batch.failed" : "batch.succeeded";
        const event = {
          type,
          version: "v1",
          timestamp: timeOnEvent ? rfc3339Of(d.ms) : "2026-01-01T00:00:00Z",
          data: { id },
        };
        const delivery = standardWebhook(SECRET, event);
        const answer = await post("gemini", delivery.body, delivery.headers);
        // batch.failed is not fetched: the type and the event's time are the observation. A fetched
        // event is the object's observation: its time, not the event's, is what is checked.
        const inBounds = d.failed === timeOnEvent ? textInBounds(d.ms) : true;
        await expectBounded(
          "Gemini webhook",
          { provider: "gemini", id },
          answer,
          inBounds,
          d.failed ? "failed" : "succeeded",
          "adjusted",
        );
      }),
      { numRuns: RUNS },
    );
  });

  it("Anthropic thin webhooks (the event's time)", async () => {
    await fc.assert(
      fc.asyncProperty(draw, async (d: Draw) => {
        const id = nextId("sesn_fz");
        const event = {
          type: "event",
          id: `wevt_${id}`,
          created_at: rfc3339Of(d.ms),
          data: { type: "session.status_run_started", id },
        };
        const delivery = standardWebhook(SECRET, event);
        const answer = await post("anthropic", delivery.body, delivery.headers);
        await expectBounded(
          "Anthropic webhook",
          { provider: "anthropic", id },
          answer,
          textInBounds(d.ms),
          "running",
          "adjusted",
        );
      }),
      { numRuns: RUNS },
    );
  });

  it("the API's observation route", async () => {
    await fc.assert(
      fc.asyncProperty(draw, async (d: Draw) => {
        const id = nextId("api");
        const state = d.failed ? "failed" : "succeeded";
        const body = `{"state":"${state}","updateTime":${d.ms},"result":${d.result},"error":${d.error}}`;
        const response = await t.app.request(`/v1/jobs/acme/${id}/observations`, json(body));
        await response.arrayBuffer();
        await expectBounded(
          "API observation",
          { provider: "acme", id },
          response.status,
          isTimestampInBounds(d.ms),
          state,
        );
      }),
      { numRuns: RUNS },
    );
  });

  it("worker callbacks", async () => {
    await fc.assert(
      fc.asyncProperty(draw, async (d: Draw) => {
        const created = await t.app.request("/v1/runs", json(`{"kind":"fuzz","maxAttempts":1}`));
        const run = (await created.json()) as { id: string };
        const claim = await t.app.request("/v1/workers/w1/claim", json(`{"kinds":["fuzz"]}`));
        const { attempt } = (await claim.json()) as { attempt: { id: string } };
        const type = d.failed ? "failed" : "succeeded";
        const body = `{"generation":1,"sequence":1,"type":"${type}","output":${d.result},"error":${d.error},"progress":${d.result}}`;
        const response = await t.app.request(`/v1/attempts/${attempt.id}/events`, json(body));
        await response.arrayBuffer();
        await expectBounded("worker callback", { provider: "runs", id: run.id }, response.status, true, type);
        const stored = (await engineOf(t.finality).store.getRun(run.id))!;
        for (const value of [stored.output, stored.error]) expectStorable(value);
      }),
      { numRuns: RUNS },
    );
  });

  it("polls: generic with paths, Replicate and Gemini (a time out of range still applies the state)", async () => {
    await fc.assert(
      fc.asyncProperty(draw, fc.constantFrom("mapped", "replicate", "gemini"), async (d: Draw, provider) => {
        const state = d.failed ? "failed" : "succeeded";
        let id: string;
        let seenMs: number;
        if (provider === "mapped") {
          id = nextId("gp");
          genericAnswers.set(
            id,
            new RawJson(`{"status":"${state}","updated":${d.ms},"output":${d.result},"failure":${d.error}}`),
          );
          seenMs = d.ms < 1e11 ? d.ms * 1000 : d.ms; // the poller reads small numbers as seconds
        } else if (provider === "replicate") {
          id = nextId("rp");
          const status = d.failed ? "failed" : "succeeded";
          replicate.set(
            Object.assign(
              new RawJson(
                `{"id":"${id}","status":"${status}","completed_at":"${rfc3339Of(d.ms)}","output":${d.result},"error":${d.error}}`,
              ) as unknown as Record<string, unknown>,
              { id },
            ),
          );
          seenMs = Date.parse(rfc3339Of(d.ms));
        } else {
          id = `models/veo/operations/${nextId("op")}`;
          const outcome = d.failed ? `"error":{"code":3,"details":${d.error}}` : `"response":${d.result}`;
          seenMs = Date.parse(rfc3339Of(d.ms));
          gemini.set(
            id,
            new RawJson(
              `{"name":"${id}","done":true,"metadata":{"updateTime":"${rfc3339Of(d.ms)}"},${outcome}}`,
            ) as unknown as Record<string, unknown>,
          );
        }
        // A result that is JSON null reads as no result for Gemini: the poll then sees no outcome.
        if (provider === "gemini" && !d.failed && d.result === "null") return;
        await t.app.request(
          "/v1/jobs",
          json(JSON.stringify({ provider, id, kind: provider === "gemini" ? "operation" : undefined })),
        );
        await reconciler.runOnce();
        const job = await t.finality.getJob({ provider, id });
        const inBounds = isTimestampInBounds(seenMs);
        counter.add(`${provider} poll (${inBounds ? "time in range" : "time out of range"})`);
        expect(job?.state).toBe(state);
        expectOrderedInRange(job?.maxUpdateTime, `${provider} poll`);
        for (const value of [job?.result, job?.error]) expectStorable(value);
        if ((jsonSize(JSON.parse(d.result)) ?? 0) > LIMITS.resultBytes && !d.failed && provider === "mapped")
          expect(isTruncated(job?.result)).toBe(true);
      }),
      { numRuns: RUNS },
    );
  });
});
