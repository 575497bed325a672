import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signStandardWebhook } from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { AnthropicFake } from "../fakes/anthropic-fake.js";
import { BATCH_STATUSES, messageBatch, SESSION_STATUSES, session } from "../fakes/anthropic-fixtures.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { adapterFor, pollOnce } from "./helpers/adapter.js";
import { type ProviderApp, providerApp } from "./helpers/provider-app.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const fake = new AnthropicFake();
let base: string;
let restoreFetch: () => void;

beforeAll(async () => {
  restoreFetch = loopbackOnly();
  base = await fake.listen();
});
afterAll(async () => {
  await fake.close();
  restoreFetch();
});

const config = () => ({
  type: "anthropic",
  baseUrl: base,
  apiKey: fake.apiKey,
  webhook: { secrets: [SECRET] },
});
const poll = (id: string, job: Record<string, unknown> = {}) =>
  pollOnce(adapterFor("anthropic", config()), id, job);

describe("the Anthropic fake answers what the official SDK reads", () => {
  const client = () => new Anthropic({ apiKey: fake.apiKey, baseURL: base, maxRetries: 0 });

  it.each(BATCH_STATUSES)("messages.batches.retrieve: %s", async (status) => {
    fake.batches.set(`msgbatch_sdk_${status}`, messageBatch(`msgbatch_sdk_${status}`, status));
    const batch = await client().messages.batches.retrieve(`msgbatch_sdk_${status}`);
    expect(batch).toMatchObject({ type: "message_batch", processing_status: status });
  });

  it.each(SESSION_STATUSES)("beta.sessions.retrieve: %s", async (status) => {
    fake.setSession(session(`sesn_sdk_${status}`, status));
    const found = await client().beta.sessions.retrieve(`sesn_sdk_${status}`);
    expect(found).toMatchObject({ id: `sesn_sdk_${status}`, type: "session", status });
  });

  it("beta.sessions.events.list finds the latest idle event the adapter also asks for", async () => {
    fake.setSession(session("sesn_sdk_events", "idle"), {
      reason: "requires_action",
      processedAt: "2026-11-01T10:01:00Z",
    });
    fake.setSession(session("sesn_sdk_events", "idle"), {
      reason: "end_turn",
      processedAt: "2026-11-01T10:02:00Z",
    });
    const page = await client().beta.sessions.events.list("sesn_sdk_events", {
      order: "desc",
      types: ["session.status_idle"],
      limit: 1,
    });
    expect(page.data).toHaveLength(1);
    expect(page.data[0]).toMatchObject({ type: "session.status_idle", stop_reason: { type: "end_turn" } });
    const sdkQuery = fake.server.requestsTo("/v1/sessions/sesn_sdk_events/events").at(-1)?.query.toString();
    await poll("sesn_sdk_events");
    expect(fake.server.requestsTo("/v1/sessions/sesn_sdk_events/events").at(-1)?.query.toString()).toBe(
      sdkQuery,
    );
  });
});

describe("Anthropic message batches map as documented", () => {
  it.each([
    ["in_progress", {}, "running"],
    ["canceling", {}, "running"],
    ["ended", {}, "succeeded"],
    ["ended", { cancelled: true }, "cancelled"],
    ["ended", { counts: { succeeded: 0, errored: 0, expired: 100 } }, "expired"],
  ] as const)("%s %j → %s", async (status, options, expected) => {
    const id = `msgbatch_map_${status}_${expected}`;
    fake.batches.set(id, messageBatch(id, status, options));
    expect(await poll(id)).toMatchObject({
      kind: "observed",
      observation: { state: expected, rawState: status },
    });
  });

  it("keeps request_counts and results_url on the result of an ended batch", async () => {
    expect(await poll("msgbatch_map_ended_succeeded")).toMatchObject({
      observation: {
        result: {
          request_counts: { succeeded: 95, errored: 3, expired: 2 },
          results_url: expect.stringContaining("/results"),
        },
      },
    });
  });
});

describe("Anthropic sessions: one run per job", () => {
  const anchored = { registered: true, submittedAt: Date.parse("2026-11-01T10:00:00Z") + 60_000 };

  it.each([
    ["rescheduling", undefined, "running"],
    ["running", undefined, "running"],
    ["idle", undefined, "pending"],
    ["idle", "end_turn", "succeeded"],
    ["idle", "retries_exhausted", "failed"],
    ["idle", "refusal", "failed"],
    ["idle", "requires_action", "running"],
    ["idle", "budget_reached", "running"],
    ["idle", "a_new_reason", "idle:a_new_reason"],
    ["terminated", undefined, "failed"],
    ["terminated", "end_turn", "succeeded"],
    ["sleeping", undefined, "sleeping"],
  ])("%s + %s → %s", async (status, reason, expected) => {
    const id = `sesn_map_${status}_${reason ?? "none"}`;
    fake.events.delete(id);
    fake.setSession(session(id, status), reason === undefined ? undefined : { reason });
    expect(await poll(id, anchored)).toMatchObject({
      kind: "observed",
      observation: { state: expected, kind: "session" },
    });
  });

  it("flags a run waiting for input, and an archived session as cancelled", async () => {
    expect(await poll("sesn_map_idle_requires_action", anchored)).toMatchObject({
      observation: { result: { waitingForInput: true, stopReason: { type: "requires_action" } } },
    });
    fake.setSession(session("sesn_archived", "terminated", { archived: true }));
    expect(await poll("sesn_archived", anchored)).toMatchObject({ observation: { state: "cancelled" } });
  });

  it("ignores an idle event from before the run began (an earlier turn)", async () => {
    fake.setSession(session("sesn_old_turn", "idle"), {
      reason: "end_turn",
      processedAt: "2026-11-01T09:00:00Z",
    });
    expect(await poll("sesn_old_turn", anchored)).toMatchObject({ observation: { state: "pending" } });
    const runStartedAt = "2026-11-01T08:59:00Z";
    expect(await poll("sesn_old_turn", { ...anchored, metadata: { runStartedAt } })).toMatchObject({
      observation: { state: "succeeded" },
    });
  });
});

describe("webhook signatures agree with the Anthropic SDK's beta.webhooks.unwrap", () => {
  const client = new Anthropic({ apiKey: "unused" });
  const body = JSON.stringify({
    type: "event",
    id: "wevt_1",
    created_at: "2026-03-15T10:00:00Z",
    data: { type: "session.status_idled", id: "sesn_1" },
  });
  const now = Math.floor(Date.now() / 1000);

  it("accepts what Finality signs", () => {
    const headers = { ...signStandardWebhook({ id: "msg_1", timestampSeconds: now, body, secret: SECRET }) };
    expect(client.beta.webhooks.unwrap(body, { headers, key: SECRET })).toMatchObject({
      data: { type: "session.status_idled" },
    });
  });

  it("refuses what Finality refuses: an old timestamp, another key", () => {
    const old = {
      ...signStandardWebhook({ id: "msg_2", timestampSeconds: now - 301, body, secret: SECRET }),
    };
    expect(() => client.beta.webhooks.unwrap(body, { headers: old, key: SECRET })).toThrow();
    const other = { ...signStandardWebhook({ id: "msg_3", timestampSeconds: now, body, secret: SECRET }) };
    expect(() =>
      client.beta.webhooks.unwrap(body, { headers: other, key: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD" }),
    ).toThrow();
  });
});

describe("Anthropic end to end", () => {
  let app: ProviderApp;
  beforeAll(async () => {
    app = await providerApp({ anthropic: config() });
  });
  afterAll(() => app.close());

  it("settles a message batch on reconcile (batches send no webhooks)", async () => {
    await app.register("anthropic", "msgbatch_e2e");
    fake.batches.set("msgbatch_e2e", messageBatch("msgbatch_e2e", "ended"));
    await app.reconciler.runOnce();
    expect(await app.job("anthropic", "msgbatch_e2e")).toMatchObject({
      state: "succeeded",
      settledBy: "reconcile",
      result: { request_counts: { succeeded: 95 }, results_url: expect.any(String) },
    });
  });

  it("settles a session run whose webhook was lost, on reconcile", async () => {
    await app.register("anthropic", "sesn_lost");
    fake.setSession(session("sesn_lost", "idle"), {
      reason: "end_turn",
      processedAt: new Date().toISOString(),
    });
    await app.reconciler.runOnce();
    expect(await app.job("anthropic", "sesn_lost")).toMatchObject({
      state: "succeeded",
      settledBy: "reconcile",
    });
  });

  it("follows a run through thin webhooks: fetch on idle, waiting for input, run again, end of turn", async () => {
    await app.register("anthropic", "sesn_run");
    const started = await app.post(
      "anthropic",
      fake.webhook(SECRET, "session.status_run_started", "sesn_run"),
    );
    expect(started).toMatchObject({ status: 200, body: { state: "running" } });

    fake.setSession(session("sesn_run", "idle", { updatedAt: new Date().toISOString() }), {
      reason: "requires_action",
      processedAt: new Date(Date.now() + 1000).toISOString(),
    });
    const fetches = fake.server.requestsTo("/v1/sessions/sesn_run").length;
    const idled = fake.webhook(SECRET, "session.status_idled", "sesn_run");
    expect(await app.post("anthropic", idled)).toMatchObject({
      status: 200,
      body: { outcome: "applied", state: "running" },
    });
    expect(fake.server.requestsTo("/v1/sessions/sesn_run").length).toBe(fetches + 2);
    expect(await app.job("anthropic", "sesn_run")).toMatchObject({ result: { waitingForInput: true } });
    expect(await app.post("anthropic", idled)).toMatchObject({ body: { outcome: "duplicate-delivery" } });

    fake.setSession(session("sesn_run", "idle"), {
      reason: "end_turn",
      processedAt: new Date(Date.now() + 2000).toISOString(),
    });
    const ended = await app.post("anthropic", fake.webhook(SECRET, "session.status_idled", "sesn_run"));
    expect(ended).toMatchObject({ status: 200, body: { outcome: "applied", state: "succeeded" } });
    expect(await app.job("anthropic", "sesn_run")).toMatchObject({
      settledBy: "webhook",
      result: { stopReason: { type: "end_turn" } },
    });
  });

  it("records events about other objects as unknown states", async () => {
    const sent = await app.post("anthropic", fake.webhook(SECRET, "vault.created", "vlt_1"));
    expect(sent).toMatchObject({ status: 200, body: { outcome: "unknown-state" } });
  });
});
