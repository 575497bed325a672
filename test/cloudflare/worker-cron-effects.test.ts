import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { startWorkerLedger, type WorkerLedger } from "./helpers/worker-ledger.js";

const JOBS = 30;
const POLLS_PER_RUN = 12;

async function jobsOf(worker: WorkerLedger): Promise<Record<string, unknown>[]> {
  const page = (await (await worker.fetch("/v1/jobs?provider=acme&limit=500")).json()) as {
    items: Record<string, unknown>[];
  };
  return page.items;
}

describe("the cron trigger on Workers", () => {
  const fake = new FakeProvider();
  let worker: WorkerLedger;
  beforeAll(async () => {
    await fake.listen();
    worker = await startWorkerLedger({
      providers: {
        acme: { type: "generic", webhook: { secrets: [SECRET] }, poll: { url: `${fake.url}/jobs/{id}` } },
      },
      reconcile: { graceSeconds: 0.001, minIntervalSeconds: 0.001, maxIntervalSeconds: 60 },
      cloudflare: { pollsPerRun: POLLS_PER_RUN },
      log: { level: "warn" },
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await fake.close();
  });

  it("settles the jobs whose webhooks were lost, a batch per run, resuming where the last run stopped", async () => {
    for (let i = 0; i < JOBS; i++) {
      fake.addJob(`job-${i}`, [
        { afterMs: 0, state: "running" },
        { afterMs: 0, state: i % 5 === 0 ? "failed" : "succeeded", result: { n: i } },
      ]);
      const registered = await worker.fetch("/v1/jobs", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ provider: "acme", id: `job-${i}` }),
      });
      expect(registered.status).toBeLessThan(300);
    }
    // No webhook is ever sent: only the cron's polls can settle them.
    const pollsBefore = () => [...fake.polls.values()].reduce((a, b) => a + b, 0);
    const runs: number[] = [];
    while ((await jobsOf(worker)).some((job) => job.state !== "succeeded" && job.state !== "failed")) {
      const before = pollsBefore();
      await worker.scheduled();
      runs.push(pollsBefore() - before);
      expect(runs.length).toBeLessThanOrEqual(Math.ceil(JOBS / POLLS_PER_RUN));
    }
    // Each run stays within its budget of subrequests, and no job is polled twice.
    expect(runs).toEqual([POLLS_PER_RUN, POLLS_PER_RUN, JOBS - 2 * POLLS_PER_RUN]);
    expect(fake.polls.size).toBe(JOBS);
    for (const job of await jobsOf(worker)) {
      const n = Number(String(job.id).slice(4));
      expect(job).toMatchObject({ state: n % 5 === 0 ? "failed" : "succeeded", settledBy: "reconcile" });
    }
  });
});

describe("effects on Workers", () => {
  const receiver = new EffectReceiver(SECRET);
  let worker: WorkerLedger;
  beforeAll(async () => {
    await receiver.listen();
    worker = await startWorkerLedger({
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      effects: [{ name: "notify", url: receiver.url, secret: SECRET, on: ["succeeded", "failed"] }],
      // A delivery stuck in flight (an interrupted alarm) is claimed again well within the test.
      effectDelivery: { retrySeconds: [0.2], timeoutSeconds: 5, leaseSeconds: 6 },
      log: { level: "error" },
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await receiver.close();
  });

  async function settle(id: string, state: string, deliveryId: string): Promise<number> {
    const body = JSON.stringify({ jobId: id, state });
    const response = await worker.fetch("/webhooks/acme", {
      method: "POST",
      headers: signWith(SECRET, body, { id: deliveryId }),
      body,
    });
    return response.status;
  }

  it("are delivered by the object's alarm, signed, once per key, and retried after a failure", async () => {
    let failFirst = true;
    receiver.decide = (delivery) => {
      if (delivery.body.job.id === "flaky" && failFirst) {
        failFirst = false;
        return 503;
      }
      return 204;
    };
    expect(await settle("steady", "succeeded", "d-steady")).toBe(200);
    expect(await settle("flaky", "failed", "d-flaky")).toBe(200);
    // The same completion again, by redelivery and by a second sender id: no second effect.
    expect(await settle("steady", "succeeded", "d-steady")).toBe(200);
    expect(await settle("steady", "succeeded", "d-steady-again")).toBe(200);

    await receiver.until(() => receiver.applied.size === 2);
    const flaky = receiver.deliveries.filter((d) => d.body.job.id === "flaky");
    expect(flaky.map((d) => d.attempt)).toEqual([1, 2]);
    expect(new Set(flaky.map((d) => d.key)).size).toBe(1);
    expect(receiver.deliveries.filter((d) => d.body.job.id === "steady")).toHaveLength(1);

    // The ledger recorded both as delivered (the answer is recorded after the receiver's 2xx).
    let effects: { status: string; attempts: number; jobId: string }[] = [];
    while (effects.length < 2 || effects.some((e) => e.status !== "delivered")) {
      effects = ((await (await worker.fetch("/v1/effects")).json()) as { items: typeof effects }).items;
    }
    expect(effects.find((e) => e.jobId === "flaky")).toMatchObject({ status: "delivered", attempts: 2 });
    expect(effects.find((e) => e.jobId === "steady")).toMatchObject({ status: "delivered", attempts: 1 });
  });
});
