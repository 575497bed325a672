import { writeFileSync } from "node:fs";
import { type AddressInfo, createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createFinalityClient, FinalityClientError } from "../../src/client/index.js";
import { jobSchema } from "../../src/http/api-schemas.js";
import { attachedIntentSchema, intentAnswerSchema } from "../../src/http/intent-api-schemas.js";
import { claimAnswerSchema, runWithAttemptsSchema } from "../../src/http/run-api-schemas.js";
import { type Service, startService, tempDir } from "../http/helpers/service.js";
import { SECRET } from "../http/helpers/webhooks.js";

// `finality/client` against a real `finality serve` child process, with an API token and a
// worker pool token: the application registers and observes a job and reads its events, queues
// a run; a worker claims it, heartbeats and completes it.

const API_TOKEN = "client-test-api-token-0123456789";
const POOL_TOKEN = "client-test-pool-token-0123456789";

let service: Service;
const dir = tempDir();

beforeAll(async () => {
  const configPath = dir.file("finality.config.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      server: { apiToken: API_TOKEN },
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      reconcile: { graceSeconds: 3600 },
      workers: { pools: { renderers: { token: POOL_TOKEN, kinds: ["render"] } }, sweepIntervalSeconds: 3600 },
    }),
  );
  service = await startService({ db: dir.file("ledger.db"), args: ["--config", configPath] });
});

afterAll(async () => {
  await service?.stop();
  dir.cleanup();
});

const api = () => createFinalityClient({ baseUrl: service.url, token: API_TOKEN });
const worker = () => createFinalityClient({ baseUrl: service.url, token: POOL_TOKEN });

/** A loopback port nothing listens on: one the system gave a server that is closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The FinalityClientError `call` throws; fails the test when it does not throw one. */
async function failure(call: Promise<unknown>): Promise<FinalityClientError> {
  const error = await call.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof FinalityClientError))
    throw new Error(`expected a FinalityClientError, got ${error}`);
  return error;
}

describe("finality/client against finality serve", () => {
  it("registers, observes and reads a job and its events", async () => {
    const client = api();
    expect(await client.health()).toEqual({ status: "ok" });
    expect(await client.ready()).toEqual({ status: "ready" });

    const first = await client.registerJob({ provider: "acme", id: "ops/1", kind: "render" });
    expect(first.created).toBe(true);
    expect(jobSchema.parse(first.job).state).toBe("pending");
    expect((await client.registerJob({ provider: "acme", id: "ops/1" })).created).toBe(false);

    const observed = await client.observeJob(
      "acme",
      "ops/1",
      { state: "running", seq: 1 },
      { idempotencyKey: "k1" },
    );
    expect(observed).toMatchObject({ outcome: "applied", applied: true, job: { state: "running" } });
    const again = await client.observeJob(
      "acme",
      "ops/1",
      { state: "running", seq: 1 },
      { idempotencyKey: "k1" },
    );
    expect(again.outcome).toBe("duplicate-delivery");

    expect((await client.getJob("acme", "ops/1")).state).toBe("running");
    const events = await client.listJobEvents("acme", "ops/1");
    expect(events.items.map((event) => event.reason)).toEqual([
      null,
      "already-registered",
      null,
      "duplicate-delivery",
    ]);
    const page = await client.listJobs({ provider: "acme", open: true, limit: 10 });
    expect(page.items.map((job) => job.id)).toContain("ops/1");
  });

  it("records an intent, attaches the remote id and reads it back", async () => {
    const client = api();
    const intent = { provider: "acme", key: "orders/17", kind: "render", metadata: { order: 17 } };
    const first = await client.recordIntent(intent);
    expect(first.created).toBe(true);
    expect(intentAnswerSchema.parse(first.intent)).toMatchObject({ status: "open", tag: "orders/17" });
    const again = await client.recordIntent(intent);
    expect(again).toEqual({ created: false, intent: first.intent });
    const reused = await failure(client.recordIntent({ ...intent, metadata: { order: 18 } }));
    expect(reused).toMatchObject({ status: 409, problem: { code: "conflict", reason: "intent-key-reused" } });

    const attached = attachedIntentSchema.parse(await client.attachIntent("orders/17", "remote/9"));
    expect(attached).toMatchObject({ status: "attached", jobId: "remote/9", attachedBy: "api" });
    expect(attached.job).toMatchObject({
      provider: "acme",
      id: "remote/9",
      kind: "render",
      state: "pending",
    });
    expect((await client.getJob("acme", "remote/9")).kind).toBe("render");

    const read = await client.getIntent("orders/17");
    expect(read).toMatchObject({ status: "attached", jobId: "remote/9" });
    const listed = await client.listIntents({ status: "attached", provider: "acme", limit: 10 });
    expect(listed.items.map((item) => item.key)).toEqual(["orders/17"]);
    expect((await failure(client.getIntent("orders/none"))).status).toBe(404);
  });

  it("queues a run that a worker claims, heartbeats and completes", async () => {
    const client = api();
    const queued = await client.enqueueRun({
      kind: "render",
      input: { frames: 3 },
      idempotencyKey: "render-1",
    });
    expect(queued.created).toBe(true);
    expect((await client.enqueueRun({ kind: "render", idempotencyKey: "render-1" })).created).toBe(false);

    const pool = worker();
    const claim = await pool.claimRun("renderer-1", { kinds: ["render"], waitSeconds: 5, leaseSeconds: 60 });
    if (claim === null) throw new Error("nothing claimed");
    claimAnswerSchema.parse(claim);
    expect(claim.run).toMatchObject({ id: queued.run.id, input: { frames: 3 } });
    const { id, generation } = claim.attempt;

    const beat = await pool.heartbeat(id, { generation, leaseSeconds: 60 });
    expect(beat).toMatchObject({ attemptId: id, cancelRequested: false });
    expect((await pool.reportAttemptEvent(id, { generation, sequence: 1, type: "started" })).outcome).toBe(
      "applied",
    );
    const done = await pool.reportAttemptEvent(id, {
      generation,
      sequence: 2,
      type: "succeeded",
      output: { ok: 1 },
    });
    expect(done).toMatchObject({ outcome: "applied", runStatus: "succeeded" });

    const run = runWithAttemptsSchema.parse(await client.getRun(queued.run.id));
    expect(run).toMatchObject({ status: "succeeded", output: { ok: 1 } });
    expect(run.attempts.map((attempt) => attempt.status)).toEqual(["succeeded"]);
    const types = (await client.listRunEvents(queued.run.id)).items.map((event) => event.type);
    expect(types).toContain("attempt.claimed");
    expect((await client.getJob("runs", queued.run.id)).state).toBe("succeeded");
    // Nothing left to claim: the long-poll's 204 is null.
    expect(await pool.claimRun("renderer-1", { waitSeconds: 0 })).toBeNull();
  });

  it("throws typed errors: the server's problem, a stale lease, no answer", async () => {
    const missing = await failure(api().getJob("acme", "nope"));
    expect(missing).toMatchObject({ kind: "http", status: 404, retryable: false });
    expect(missing.problem?.type).toBe("urn:finality:problem:not-found");

    const wrongToken = await failure(worker().listJobs());
    expect(wrongToken.problem?.code).toBe("unauthorized");

    const pool = worker();
    await api().enqueueRun({ kind: "render" });
    const claim = await pool.claimRun("renderer-2", { waitSeconds: 5 });
    if (claim === null) throw new Error("nothing claimed");
    const stale = await failure(
      pool.heartbeat(claim.attempt.id, { generation: claim.attempt.generation + 1 }),
    );
    expect(stale).toMatchObject({ status: 409, problem: { code: "stale-generation" } });

    const port = await closedPort();
    const closed = createFinalityClient({ baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 5000 });
    const down = await failure(closed.health());
    expect(down).toMatchObject({ kind: "unreachable", status: 0, retryable: true });
    expect(down.message).toMatch(
      new RegExp(`^GET http://127.0.0.1:${port}/healthz: unreachable: .*ECONNREFUSED`),
    );
  });
});
