import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  createAnthropicBatchLister,
  createAnthropicLister,
  createAnthropicSessionLister,
} from "../../src/providers/anthropic/anthropic-list.js";
import { createProviderHealth } from "../../src/providers/provider-health.js";
import { createStatusClient } from "../../src/providers/status-client.js";
import { AnthropicFake } from "../fakes/anthropic-fake.js";
import { messageBatch, session } from "../fakes/anthropic-fixtures.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { adapterFor } from "./helpers/adapter.js";
import {
  closedPortUrl,
  jobsAgo,
  type ListerSubject,
  listerContract,
  sweep,
} from "./helpers/lister-contract.js";

const BETA = "managed-agents-2026-04-01";
const fake = new AnthropicFake();
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
beforeEach(() => {
  fake.batches.clear();
  fake.sessions.clear();
});

const client = (baseUrl = base) =>
  createStatusClient({
    provider: "anthropic",
    baseUrl,
    headers: { "x-api-key": fake.apiKey, "anthropic-version": "2023-06-01" },
    health: createProviderHealth(),
  });

const iso = (ms: number) => new Date(ms).toISOString();

const batches = (): ListerSubject => ({
  server: fake.server,
  kind: "message_batch",
  pageSize: 100,
  ordered: true,
  taggable: false,
  deadUrl,
  staleCursor: "msgbatch_gone",
  seed(jobs) {
    for (const job of jobs)
      fake.batches.set(job.id, { ...messageBatch(job.id, "in_progress"), created_at: iso(job.createdAt) });
  },
  lister: (baseUrl) => createAnthropicBatchLister(client(baseUrl)),
  listCalls: () => fake.listCalls("/v1/messages/batches"),
});

const sessions = (): ListerSubject => ({
  server: fake.server,
  kind: "session",
  pageSize: 100,
  ordered: true,
  taggable: true,
  deadUrl,
  staleCursor: "Z29uZQ",
  seed(jobs) {
    for (const job of jobs)
      fake.setSession({
        ...session(job.id, "running"),
        created_at: iso(job.createdAt),
        metadata: job.tag === undefined ? { team: "search" } : { team: "search", finality_intent: job.tag },
      });
  },
  lister: (baseUrl) => createAnthropicSessionLister(client(baseUrl), BETA),
  listCalls: () => fake.listCalls("/v1/sessions"),
});

describe("Anthropic message batches list (GET /v1/messages/batches)", () => {
  listerContract(batches);
});

describe("Anthropic Managed Agents sessions list (GET /v1/sessions)", () => {
  listerContract(sessions);

  it("sends the beta header and includes archived sessions", async () => {
    const [open, archived] = jobsAgo("sesn_", 2, 60_000);
    sessions().seed([open as never]);
    fake.setSession({
      ...session(String(archived?.id), "terminated", { archived: true }),
      created_at: iso(archived?.createdAt ?? 0),
    });
    const run = await sweep(sessions().lister(), null, 0);
    expect(run.jobs.map((job) => job.id)).toEqual([open?.id, archived?.id]);
    const call = fake.server.seen.filter((request) => request.path === "/v1/sessions").at(-1);
    expect(call?.headers["anthropic-beta"]).toBe(BETA);
    expect(call?.query.get("include_archived")).toBe("true");
  });
});

describe("the adapter's lister: batches, then sessions, as one sweep", () => {
  it("covers both kinds, is done only after the sessions, and its resume survives a restart", async () => {
    batches().seed(jobsAgo("msgbatch_", 150, 60_000));
    sessions().seed(jobsAgo("sesn_", 120, 60_000));
    const adapter = () =>
      adapterFor("anthropic", { type: "anthropic", baseUrl: base, apiKey: fake.apiKey }).lister;
    expect(adapter()?.kinds).toEqual(["message_batch", "session"]);
    const since = Date.now() - 48 * 3_600_000;
    const first = await adapter()?.list({ resume: null, sinceMs: since }, AbortSignal.timeout(5000));
    if (first?.kind !== "page") throw new Error("no page");
    const rest = await sweep(adapter() as never, first.resume, since);
    const all = [...first.jobs, ...rest.jobs];
    expect(all.filter((job) => job.kind === "message_batch")).toHaveLength(150);
    expect(all.filter((job) => job.kind === "session")).toHaveLength(120);
    expect(rest.results.map((r) => r.kind === "page" && r.done)).toEqual([false, false, true]);
    const batchCalls = fake.listCalls("/v1/messages/batches");
    const sessionCalls = fake.listCalls("/v1/sessions");
    const again = await sweep(adapter() as never, rest.resume, since);
    expect(again.results).toHaveLength(2);
    expect(fake.listCalls("/v1/messages/batches") - batchCalls).toBe(1);
    expect(fake.listCalls("/v1/sessions") - sessionCalls).toBe(1);
  });

  it("a resume it cannot read starts with the first list again", async () => {
    batches().seed(jobsAgo("msgbatch_", 2, 60_000));
    sessions().seed(jobsAgo("sesn_", 2, 60_000));
    for (const resume of ["nope", '{"at":7,"parts":[null,null]}', '{"at":1,"parts":[null]}']) {
      const run = await sweep(createAnthropicLister(client(), BETA), resume, 0);
      expect(run.jobs.map((job) => job.kind)).toEqual([
        "message_batch",
        "message_batch",
        "session",
        "session",
      ]);
    }
  });

  it("a 429 on the second list keeps the first list's progress", async () => {
    batches().seed(jobsAgo("msgbatch_", 5, 60_000));
    sessions().seed(jobsAgo("sesn_", 5, 60_000));
    const lister = createAnthropicLister(client(), BETA);
    const first = await lister.list({ resume: null, sinceMs: 0 }, AbortSignal.timeout(5000));
    if (first.kind !== "page") throw new Error(first.error);
    expect(first.done).toBe(false);
    fake.server.failNext = { status: 429, count: 1, retryAfter: "3" };
    const limited = await lister.list({ resume: first.resume, sinceMs: 0 }, AbortSignal.timeout(5000));
    expect(limited).toMatchObject({ kind: "failed", status: 429, retryAfterMs: 3000 });
    const before = fake.listCalls("/v1/messages/batches");
    const rest = await sweep(lister, first.resume, 0);
    expect(fake.listCalls("/v1/messages/batches")).toBe(before);
    expect(rest.jobs.map((job) => job.kind)).toEqual(Array(5).fill("session"));
  });
});

describe("a lister for batches only (a key without Managed Agents access)", () => {
  it("never calls the sessions list", async () => {
    batches().seed(jobsAgo("msgbatch_", 3, 60_000));
    sessions().seed(jobsAgo("sesn_", 3, 60_000));
    const before = fake.listCalls("/v1/sessions");
    const run = await sweep(createAnthropicLister(client(), BETA, ["message_batch"]), null, 0);
    expect(run.jobs.map((job) => job.kind)).toEqual(Array(3).fill("message_batch"));
    expect(run.results).toHaveLength(1);
    expect(fake.listCalls("/v1/sessions")).toBe(before);
  });

  it("is what `discover.kinds` in the provider's configuration asks for", async () => {
    batches().seed(jobsAgo("msgbatch_", 2, 60_000));
    sessions().seed(jobsAgo("sesn_", 2, 60_000));
    const config = {
      type: "anthropic",
      baseUrl: base,
      apiKey: fake.apiKey,
      discover: { kinds: ["message_batch"] },
    };
    const lister = adapterFor("anthropic", config).lister;
    expect(lister?.kinds).toEqual(["message_batch"]);
    const before = fake.listCalls("/v1/sessions");
    const run = await sweep(lister as never, null, 0);
    expect(run.jobs.map((job) => job.kind)).toEqual(["message_batch", "message_batch"]);
    expect(fake.listCalls("/v1/sessions")).toBe(before);
  });
});

describe("the fake's lists are what the official SDK pages through", () => {
  const sdk = () => new Anthropic({ apiKey: fake.apiKey, baseURL: base, maxRetries: 0 });

  it("message batches, by after_id", async () => {
    const seeded = jobsAgo("msgbatch_sdk", 45, 60_000);
    batches().seed(seeded);
    const seen: string[] = [];
    for await (const batch of sdk().messages.batches.list({ limit: 20 })) seen.push(batch.id);
    expect(seen).toEqual(seeded.map((job) => job.id));
  });

  it("sessions, by next_page", async () => {
    const seeded = jobsAgo("sesn_sdk", 45, 60_000);
    sessions().seed(seeded);
    const seen: string[] = [];
    for await (const item of sdk().beta.sessions.list({ limit: 20 })) seen.push(item.id);
    expect(seen).toEqual(seeded.map((job) => job.id));
  });
});
