import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { type ShardedWorker, startShardedWorkers } from "./helpers/sharded-workers.js";

// `GET /v1/jobs/{provider}/{id}?wait=N` on a Worker with 4 shards: the wait is routed to the job's
// own shard with its query, and answered by the settling webhook's commit there.

describe("waiting for one job on 4 shards", () => {
  let worker: ShardedWorker;
  beforeAll(async () => {
    worker = await startShardedWorkers([
      {
        name: "v",
        config: {
          providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
          cloudflare: { shards: 4 },
          log: { level: "error" },
        },
      },
    ]);
  }, 120_000);
  afterAll(async () => {
    await worker?.dispose();
  });

  let sent = 0;
  async function webhook(id: string, state: string) {
    const body = JSON.stringify({ jobId: id, state });
    const headers = signWith(SECRET, body, { id: `wait-${++sent}` });
    const response = await worker.fetch("v", "/webhooks/acme", { method: "POST", headers, body });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
  }

  it("answers each waiter when its job settles, and an open job at its deadline", async () => {
    const ids = ["w-1", "w-2", "w-3", "w-4", "w-5", "w-6"];
    for (const id of ids) await webhook(id, "running");
    const waits = ids.map(async (id) => {
      const response = await worker.fetch("v", `/v1/jobs/acme/${id}?wait=60`);
      return {
        status: response.status,
        settled: response.headers.get("finality-settled"),
        body: await response.json(),
      };
    });
    for (const id of ids) await webhook(id, "succeeded");
    // Settled by their commits: a wait that missed it would answer only at 60 s, past the test's timeout.
    for (const answer of await Promise.all(waits)) {
      expect(answer).toMatchObject({ status: 200, settled: "true", body: { state: "succeeded" } });
    }
    await webhook("open", "running");
    const open = await worker.fetch("v", "/v1/jobs/acme/open?wait=1");
    expect(open.headers.get("finality-settled")).toBe("false");
    expect(await open.json()).toMatchObject({ state: "running" });
  }, 50_000);
});
