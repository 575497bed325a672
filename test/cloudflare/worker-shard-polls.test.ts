import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardIndexOf } from "../../src/cloudflare/shard-layout.js";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { type ShardedWorker, startShardedWorkers } from "./helpers/sharded-workers.js";

// Status polls on a sharded Worker reach every job, however it came to its shard (issue 32,
// `discovery-polls-settle`): registered through the API, attached to an intent through the API
// (/__finality/attach-intent), adopted by a discovery sweep with an intent's tag and without
// (/__finality/adopt-listed). The provider is configured after others that have nothing due:
// each shard's cron run polls at most `pollsPerRun`, and the reconciler used to let every lane
// reserve its share of that at once, so the lanes ahead of it held the whole budget while finding
// nothing and this provider's jobs were never polled, whichever path wrote them. One ledger
// object (no placement paths) had the same hole: it is drawn too.

/** Two lanes of 4 slots take a budget of 8: the third provider in order is the one at risk. */
const POLLS_PER_RUN = 8;
const CONCURRENCY = 4;

describe.each([4, 1])("status polls on %i shard(s), behind other providers", (SHARDS) => {
  let worker: ShardedWorker;
  const fake = new FakeProvider();
  beforeAll(async () => {
    await fake.listen();
    const quiet = { type: "generic", webhook: { secrets: [SECRET] } };
    worker = await startShardedWorkers([
      {
        name: "v",
        config: {
          providers: {
            first: quiet,
            second: quiet,
            acme: {
              type: "generic",
              webhook: { secrets: [SECRET] },
              poll: { url: `${fake.url}/jobs/{id}`, timeoutSeconds: 2 },
              discover: { enabled: true, url: `${fake.url}/jobs?after={cursor}` },
            },
          },
          // Due at once: the cron runs below are the only clock this test needs.
          reconcile: { graceSeconds: 0, concurrency: CONCURRENCY },
          cloudflare: { shards: SHARDS, pollsPerRun: POLLS_PER_RUN },
          log: { level: "error" },
        },
      },
    ]);
  }, 120_000);
  afterAll(async () => {
    await worker?.dispose();
    await fake.close();
  });

  const post = async (path: string, body: unknown) => {
    const response = await worker.fetch("v", path, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    await response.arrayBuffer();
    return response.status;
  };
  const job = async (id: string) =>
    (await (await worker.fetch("v", `/v1/jobs/acme/${id}`)).json()) as Record<string, unknown>;

  it("polls and settles every job on its own shard, whichever path wrote it there", async () => {
    const registered = ["reg-0", "reg-1", "reg-2"];
    const attached = ["att-0", "att-1", "att-2"];
    const tagged = ["tag-0", "tag-1"];
    const untagged = ["listed-0", "listed-1", "listed-2"];
    const all = [...registered, ...attached, ...tagged, ...untagged];
    // Every shard holds some of them (a path that misses one shard would show).
    expect(new Set(all.map((id) => shardIndexOf({ provider: "acme", id }, SHARDS))).size).toBe(SHARDS);

    for (const id of registered) {
      fake.addJob(id, [{ afterMs: 0, state: "succeeded" }]);
      expect(await post("/v1/jobs", { provider: "acme", id })).toBe(201);
    }
    for (const [i, id] of attached.entries()) {
      fake.addJob(id, [{ afterMs: 0, state: "failed" }]);
      expect(await post("/v1/intents", { provider: "acme", key: `api-${i}`, kind: "render" })).toBe(201);
      expect(await post(`/v1/intents/api-${i}/attach`, { id })).toBe(200);
    }
    for (const [i, id] of tagged.entries()) {
      expect(await post("/v1/intents", { provider: "acme", key: `swept-${i}`, kind: "render" })).toBe(201);
      fake.addJob(id, [{ afterMs: 0, state: "succeeded" }], { tag: `swept-${i}` });
    }
    for (const id of untagged) fake.addJob(id, [{ afterMs: 0, state: "failed" }]);

    // The first run polls what the API wrote and adopts what the sweep lists (open: a listed
    // terminal state is left to the poll, which brings the result); the second polls those. The
    // sweep and the shards' polls run side by side, so an adopted job may already be polled in
    // the first run when its shard's pass comes after the adoption: then by that poll, once.
    await worker.scheduled("v");
    for (const id of [...tagged, ...untagged]) {
      const adopted = await job(id);
      if (fake.polls.get(id) === undefined) expect(adopted, id).toMatchObject({ state: "pending" });
      else expect(adopted, id).toMatchObject({ state: fake.stateOf(id)?.state, settledBy: "reconcile" });
    }
    await worker.scheduled("v");

    for (const id of all) {
      const expected = fake.stateOf(id)?.state;
      expect(await job(id), id).toMatchObject({ state: expected, settledBy: "reconcile" });
      expect(fake.polls.get(id), id).toBe(1);
    }
    for (const id of [...attached, ...tagged]) expect(await job(id), id).toMatchObject({ kind: "render" });
  });
});
