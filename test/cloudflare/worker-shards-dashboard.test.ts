import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shardIndexOf } from "../../src/cloudflare/shard-layout.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { attrs, counts, effectCard, everyRow, page } from "./helpers/dashboard-html.js";
import { finalStateOf, inParallel, webhookLoad } from "./helpers/shard-load.js";
import { type ShardedWorker, startShardedWorkers } from "./helpers/sharded-workers.js";

// The dashboard's overview, jobs, effects and parked pages of a sharded Worker show every shard:
// the same load on 4 shards and on 1, compared page by page (HTML, as a browser gets it).
const JOBS = 120;
const SHARDS = 4;
const PARKED = 12;
const load = webhookLoad(JOBS, 33);

function configWith(shards: number) {
  return {
    providers: {
      acme: { type: "generic", webhook: { secrets: [SECRET] } },
      strict: { type: "generic", webhook: { secrets: [SECRET] }, unknownJobs: "registered-only" },
    },
    // Written, never sent: every job's effect stays pending, so the effects page is deterministic.
    effects: [{ name: "notify", url: "http://127.0.0.1:9/", secret: SECRET, on: ["succeeded", "failed"] }],
    effectDelivery: { enabled: false },
    cloudflare: { shards },
    log: { level: "error" },
  };
}

async function deploy(shards: number): Promise<ShardedWorker> {
  const worker = await startShardedWorkers([{ name: "v", config: configWith(shards) }]);
  const statuses: number[] = [];
  await inParallel(load, 16, async (webhook) => {
    const response = await worker.fetch("v", "/webhooks/acme", {
      method: "POST",
      headers: webhook.headers,
      body: webhook.body,
    });
    statuses.push(response.status);
    await response.arrayBuffer();
  });
  for (let i = 0; i < PARKED; i++) {
    const body = JSON.stringify({ jobId: `early-${i}`, state: "succeeded", seq: 1 });
    const response = await worker.fetch("v", "/webhooks/strict", {
      method: "POST",
      headers: signWith(SECRET, body),
      body,
    });
    statuses.push(response.status);
    await response.arrayBuffer();
  }
  expect(statuses.filter((s) => s !== 200)).toEqual([]);
  return worker;
}

const shardOf = (provider: string, id: string) => shardIndexOf({ provider, id }, SHARDS);

describe(`the dashboard of ${SHARDS} shards, after ${load.length} signed webhooks for ${JOBS} jobs`, () => {
  let four: ShardedWorker;
  let one: ShardedWorker;
  beforeAll(async () => {
    four = await deploy(SHARDS);
    one = await deploy(1);
  }, 300_000);
  afterAll(async () => {
    await four?.dispose();
    await one?.dispose();
  });

  it("overview: every count is the sum over the shards, and equals a single-shard run's", async () => {
    const shards = (await (await four.fetch("v", "/v1/shards")).json()) as {
      total: {
        jobsByState: Record<string, number>;
        effectsByStatus: Record<string, number>;
        openJobs: number;
      };
    };
    const [onFour, onOne] = await Promise.all([four, one].map(async (w) => counts(await page(w, "/"))));
    const failed = Array.from({ length: JOBS }, (_, i) => i).filter((i) => i % 7 === 0).length;
    expect(onFour["state-failed"]).toBe(failed);
    expect(onFour["state-succeeded"]).toBe(JOBS - failed);
    expect(onFour["state-failed"]).toBe(shards.total.jobsByState.failed);
    expect(onFour["state-succeeded"]).toBe(shards.total.jobsByState.succeeded);
    expect(onFour["effects-pending"]).toBe(JOBS);
    expect(onFour["effects-pending"]).toBe(shards.total.effectsByStatus.pending);
    expect(onFour.open).toBe(shards.total.openJobs);
    expect(onFour).toEqual(onOne);
  });

  it("jobs: pages through every job exactly once, from every shard, as one shard does", async () => {
    const onFour = await everyRow(four, "/jobs?provider=acme&limit=25", "data-job", "next-page");
    const onOne = await everyRow(one, "/jobs?provider=acme&limit=25", "data-job", "next-page");
    expect(onFour.rows).toHaveLength(JOBS);
    expect(new Set(onFour.rows).size).toBe(JOBS);
    expect(onFour.pages).toBe(Math.ceil(JOBS / 25));
    expect([...onFour.rows].sort()).toEqual([...onOne.rows].sort());
    const held = new Set(onFour.rows.map((key) => shardOf("acme", key.slice("acme/".length))));
    expect(held.size).toBe(SHARDS);
  });

  it("jobs: a filter applies on every shard", async () => {
    const failed = await everyRow(four, "/jobs?state=failed&limit=25", "data-job", "next-page");
    const expected = Array.from({ length: JOBS }, (_, i) => `job-${i}`).filter(
      (id) => finalStateOf(id) === "failed",
    );
    expect([...failed.rows].sort()).toEqual(expected.map((id) => `acme/${id}`).sort());
    // A search by id finds the job on its shard, whichever it is.
    for (const id of ["job-1", "job-2", "job-3", "job-4"]) {
      const html = await page(four, `/jobs?q=${id}`);
      expect(attrs(html, "data-job"), id).toEqual([`acme/${id}`]);
    }
  });

  it("effects: the summary and the pending pages show every shard's effects, each once", async () => {
    const summary = await page(four, "/effects");
    expect(effectCard(summary, "pending")).toBe(JOBS);
    expect(effectCard(summary, "dead")).toBe(0);
    expect(attrs(summary, "data-effect")).toHaveLength(25);
    const pending = await everyRow(four, "/effects?status=pending", "data-effect", "more-pending");
    expect(pending.rows).toHaveLength(JOBS);
    expect(new Set(pending.rows).size).toBe(JOBS);
    expect(pending.pages).toBe(Math.ceil(JOBS / 50));
    const single = await everyRow(one, "/effects?status=pending", "data-effect", "more-pending");
    expect(single.rows).toHaveLength(JOBS);
  });

  it("parked: every shard's parked observations", async () => {
    const onFour = attrs(await page(four, "/parked"), "data-parked");
    const onOne = attrs(await page(one, "/parked"), "data-parked");
    const expected = Array.from({ length: PARKED }, (_, i) => `strict/early-${i}`).sort();
    expect([...onFour].sort()).toEqual(expected);
    expect([...onOne].sort()).toEqual(expected);
    expect(new Set(onFour.map((key) => shardOf("strict", key.slice("strict/".length)))).size).toBeGreaterThan(
      1,
    );
  });

  it("are behind the same sign-in: no token, no page", async () => {
    for (const path of ["/", "/jobs", "/effects", "/parked"]) {
      const response = await four.fetch("v", path, {
        headers: { authorization: "Bearer wrong", accept: "text/html" },
        redirect: "manual",
      });
      await response.arrayBuffer();
      expect([303, 401], path).toContain(response.status);
    }
    // The shards' part of a page is not reachable from outside.
    const part = await four.fetch("v", "/__finality/dashboard", { method: "POST", body: "{}" });
    expect(part.status).toBe(404);
    await part.arrayBuffer();
  });
});
