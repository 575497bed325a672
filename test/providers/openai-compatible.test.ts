import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { providerSchema } from "../../src/config/provider-config-schema.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { OpenAICompatFake } from "../fakes/openai-compat-fake.js";
import { adapterFor, pollOnce } from "./helpers/adapter.js";
import { sweep } from "./helpers/lister-contract.js";
import { providerApp } from "./helpers/provider-app.js";

const fake = new OpenAICompatFake();
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

// The example configurations of docs/providers/openai-compatible.md, their base URLs on the fake.
const groq = () => ({ type: "openai", compat: "groq", baseUrl: `${base}/openai/v1`, apiKey: fake.apiKey });
const together = () => ({ type: "openai", compat: "together", baseUrl: `${base}/v1`, apiKey: fake.apiKey });
const mistral = () => ({ type: "openai", compat: "mistral", baseUrl: `${base}/v1`, apiKey: fake.apiKey });

describe("Groq: OpenAI's batch format at /openai/v1", () => {
  it("polls a batch_ id as OpenAI's, and lists batches as OpenAI's", async () => {
    fake.groqBatch("batch_01groq", "completed");
    const adapter = adapterFor("groq", groq());
    expect(await pollOnce(adapter, "batch_01groq")).toMatchObject({
      observation: { state: "succeeded", kind: "batch", result: { output_file_id: "file_out" } },
    });
    expect(fake.server.seen.at(-1)?.path).toBe("/openai/v1/batches/batch_01groq");
    expect(adapter.lister?.kinds).toEqual(["batch"]);
  });
});

describe("Together: upper-case statuses, batch-… ids", () => {
  /** From https://docs.together.ai/docs/inference/batch/manage, not from the adapter's table. */
  it.each([
    ["VALIDATING", "pending"],
    ["IN_PROGRESS", "running"],
    ["COMPLETED", "succeeded"],
    ["FAILED", "failed"],
    ["EXPIRED", "expired"],
    ["CANCELLED", "cancelled"],
  ])("%s → %s", async (status, state) => {
    fake.togetherBatch(`batch-${status}`, status);
    expect(await pollOnce(adapterFor("together", together()), `batch-${status}`)).toMatchObject({
      observation: { state, rawState: status, kind: "batch" },
    });
  });

  it("keeps the files and progress as the result, the error as the error", async () => {
    const adapter = adapterFor("together", together());
    expect(await pollOnce(adapter, "batch-COMPLETED")).toMatchObject({
      observation: { result: { output_file_id: "file-out", progress: 100 } },
    });
    expect(await pollOnce(adapter, "batch-FAILED")).toMatchObject({
      observation: { error: { errors: "input file is not valid JSONL" } },
    });
  });

  it("registers an id without a kind and settles it by polling", async () => {
    const app = await providerApp({ together: together() });
    try {
      await app.register("together", "batch-COMPLETED");
      await app.reconciler.runOnce();
      expect(await app.job("together", "batch-COMPLETED")).toMatchObject({
        state: "succeeded",
        settledBy: "reconcile",
      });
    } finally {
      await app.close();
    }
  });
});

describe("Mistral: /batch/jobs and its own statuses", () => {
  const id = (status: string) => `6b9c1f5e-0000-4000-8000-${status.length.toString().padStart(12, "0")}`;
  it.each([
    ["QUEUED", "pending"],
    ["RUNNING", "running"],
    ["SUCCESS", "succeeded"],
    ["FAILED", "failed"],
    ["TIMEOUT_EXCEEDED", "expired"],
    ["CANCELLATION_REQUESTED", "running"],
    ["CANCELLED", "cancelled"],
  ])("%s → %s", async (status, state) => {
    fake.mistralJob(`${status}-${id(status)}`, status);
    expect(await pollOnce(adapterFor("mistral", mistral()), `${status}-${id(status)}`)).toMatchObject({
      observation: { state, rawState: status },
    });
    expect(fake.server.seen.at(-1)?.path).toBe(`/v1/batch/jobs/${status}-${id(status)}`);
  });

  it("keeps output_file and the request counts; errors on a failed job", async () => {
    const adapter = adapterFor("mistral", mistral());
    expect(await pollOnce(adapter, `SUCCESS-${id("SUCCESS")}`)).toMatchObject({
      observation: { result: { output_file: "file-out", succeeded_requests: 2 } },
    });
    expect(await pollOnce(adapter, `FAILED-${id("FAILED")}`)).toMatchObject({
      observation: { error: { errors: [{ message: "invalid input file" }] } },
    });
  });
});

describe("discovery: Together's array, Mistral's numbered pages", () => {
  const since = () => Date.now() - 100 * 365 * 86_400_000;
  it("Together lists every batch in one answer, unordered", async () => {
    const run = await sweep(adapterFor("together", together()).lister!, null, since());
    expect(run.jobs.map((job) => job.id).sort()).toEqual([...fake.together.keys()].sort());
    expect(run.results).toHaveLength(1);
  });

  it("Mistral pages by number until total, and reads the tag from metadata", async () => {
    for (let i = 0; i < 130; i++)
      fake.mistralJob(`list-${i}`, "RUNNING", i === 7 ? { finality_intent: "order-7" } : null);
    const before = fake.server.requestsTo("/v1/batch/jobs").length;
    const run = await sweep(adapterFor("mistral", mistral()).lister!, null, since());
    const asked = fake.server.requestsTo("/v1/batch/jobs").slice(before);
    expect(asked.map((request) => request.query.get("page"))).toEqual(["0", "1"]);
    expect(new Set(run.jobs.map((job) => job.id))).toEqual(new Set(fake.mistral.keys()));
    expect(run.jobs.find((job) => job.id === "list-7")?.tag).toBe("order-7");
  });
});

describe("what the adapter refuses, with a config error that says why", () => {
  const refused = (raw: Record<string, unknown>) => {
    const parsed = providerSchema.safeParse(raw);
    return parsed.success ? "accepted" : parsed.error.issues.map((issue) => issue.message).join("; ");
  };
  it("Fireworks (not OpenAI's batch API), an unknown compat, webhooks where none are sent", () => {
    expect(refused({ type: "openai", compat: "fireworks", apiKey: "k" })).toMatch(
      /batchInferenceJobs.*generic/,
    );
    expect(refused({ type: "openai", compat: "deepseek", apiKey: "k" })).toMatch(
      /must be one of: openai, groq/,
    );
    expect(refused({ ...mistral(), webhook: { secrets: ["s"] } })).toMatch(/settle by polling/);
    expect(refused({ type: "openai", apiKey: "k", webhook: { secrets: ["s"] } })).toBe("accepted");
  });
});
