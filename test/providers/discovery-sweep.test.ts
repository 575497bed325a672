import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ObservationInput } from "../../src/core/validation.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Finality } from "../../src/engine/finality.js";
import { sweepOnce } from "../../src/providers/discovery-sweep.js";
import { createGenericLister } from "../../src/providers/generic/generic-lister.js";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { engineOf } from "../helpers/engine.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";

// Discovery sweeps against the generic fake over real HTTP, on a SQLite file.

const HOUR = 3_600_000;
let dir: TempDir;
let fake: FakeProvider;
let finality: Finality;
const delivered: string[] = [];
const open = () =>
  createFinality({
    store: { sqlite: dir.file("ledger.db") },
    providers: { acme: {} },
    effects: [{ name: "done", on: ["succeeded"], handler: async (d) => void delivered.push(d.job.id) }],
  });

beforeEach(async () => {
  dir = tempDir("finality-discovery-");
  delivered.length = 0;
  fake = new FakeProvider();
  fake.listPageSize = 3;
  await fake.listen();
  finality = open();
});
afterEach(async () => {
  await finality.close();
  await fake.close();
  dir.cleanup();
});

const lister = () => createGenericLister("acme", { url: `${fake.url}/jobs?after={cursor}` });
const sweep = (budget = 20, on: Finality = finality) =>
  // No poller here: a settled job the list shows settles from the list.
  sweepOnce(on, {
    provider: "acme",
    lister: lister(),
    pagesPerSweep: budget,
    lookbackMs: 48 * HOUR,
    settleFromList: true,
  });
const addJobs = (from: number, to: number, state = "running") => {
  for (let i = from; i <= to; i++) fake.addJob(`job-${i}`, [{ afterMs: 0, state }]);
};
const ids = async () =>
  (await finality.listJobs({ provider: "acme", limit: 500 })).items.map((j) => j.id).sort();

describe("discovery sweep (generic list API)", () => {
  it("adopts every unknown job across several pages, with source discovery, due for a poll at once", async () => {
    addJobs(1, 8);
    const result = await sweep();
    expect(result).toMatchObject({ pages: 3, listed: 8, adopted: 8, attached: 0, done: true });
    expect(await ids()).toHaveLength(8);
    const job = await finality.getJob({ provider: "acme", id: "job-5" });
    expect(job).toMatchObject({ state: "running", registered: false });
    expect(job?.nextCheckAt).toBeLessThanOrEqual(engineOf(finality).clock.now());
    const events = await finality.jobEvents({ provider: "acme", id: "job-5" });
    expect(events.map((e) => e.source)).toEqual(["discovery"]);
    // Nothing new: one page read again (the last), nothing written.
    fake.listCalls = 0;
    expect(await sweep()).toMatchObject({ pages: 1, adopted: 0, done: true });
    expect(fake.listCalls).toBe(1);
    expect(await finality.jobEvents({ provider: "acme", id: "job-5" })).toHaveLength(1);
  });

  it("keeps the cursor after every page, so a restart resumes where the last sweep stopped", async () => {
    addJobs(1, 9);
    // A budget of two pages: six jobs, then the sweep stops with its cursor stored.
    expect(await sweep(2)).toMatchObject({ pages: 2, adopted: 6, done: false });
    await finality.close();
    finality = open();
    addJobs(10, 11);
    fake.listCalls = 0;
    expect(await sweep()).toMatchObject({ pages: 2, adopted: 5, done: true });
    expect(fake.listCalls).toBe(2);
    expect(await ids()).toHaveLength(11);
  });

  it("stops on a 429 mid-sweep with its Retry-After, and goes on from the page it stored", async () => {
    addJobs(1, 9);
    const first = await sweepOnce(finality, {
      provider: "acme",
      lister: {
        kinds: [],
        // The second call meets the 429.
        list: async (query, signal) => {
          if (query.resume !== null) fake.listFailures.push({ status: 429, retryAfterSeconds: 7 });
          return lister().list(query, signal);
        },
      },
      pagesPerSweep: 20,
      lookbackMs: 48 * HOUR,
    });
    expect(first).toMatchObject({ pages: 1, adopted: 3, done: false });
    expect(first.failed).toMatchObject({ status: 429, retryAfterMs: 7000 });
    expect(await ids()).toEqual(["job-1", "job-2", "job-3"]);
    expect(await sweep()).toMatchObject({ pages: 2, adopted: 6, done: true });
    expect(await ids()).toHaveLength(9);
  });

  it("matches a listed job's tag to its open intent and attaches it; a settled one settles once", async () => {
    await finality.recordIntent({ provider: "acme", key: "order-1", kind: "render", metadata: { n: 1 } });
    fake.addJob("remote-1", [{ afterMs: 0, state: "succeeded" }], { tag: "order-1" });
    fake.addJob("remote-2", [{ afterMs: 0, state: "succeeded" }], { tag: "nobody" });
    const result = await sweep();
    expect(result).toMatchObject({ adopted: 1, attached: 1 });
    expect(await finality.getIntent("order-1")).toMatchObject({ jobId: "remote-1", attachedBy: "discovery" });
    const job = await finality.getJob({ provider: "acme", id: "remote-1" });
    expect(job).toMatchObject({
      state: "succeeded",
      kind: "render",
      registered: true,
      settledBy: "discovery",
    });
    const events = await finality.jobEvents({ provider: "acme", id: "remote-1" });
    expect(events.map((e) => `${e.source}:${e.state}`)).toEqual(["discovery:succeeded", "intent:pending"]);
    await sweep();
    const effects = await engineOf(finality).store.listEffects({ provider: "acme" });
    expect(effects.items.map((e) => e.jobId).sort()).toEqual(["remote-1", "remote-2"]);
  });

  it("with a poller, a job listed settled is adopted open and due at once: the poll brings its result", async () => {
    fake.addJob("remote-9", [{ afterMs: 0, state: "succeeded" }]);
    await sweepOnce(finality, {
      provider: "acme",
      lister: lister(),
      pagesPerSweep: 5,
      lookbackMs: 48 * HOUR,
    });
    const job = await finality.getJob({ provider: "acme", id: "remote-9" });
    expect(job).toMatchObject({ state: "pending", settledAt: null });
    expect(job?.nextCheckAt).toBeLessThanOrEqual(engineOf(finality).clock.now());
  });

  // Issue 33, defect 3: `registered-only`, discovery, no polling. The early completion is parked,
  // the sweep adopts the job while the list still says running: the parked completion settles it.
  it("applies the completion parked for a job the sweep adopts while the list still shows it running", async () => {
    await finality.close();
    const strict = createFinality({
      store: { sqlite: dir.file("strict.db") },
      providers: { acme: { unknownJobs: "registered-only" } },
      effects: [{ name: "done", on: ["succeeded"], handler: async (d) => void delivered.push(d.job.id) }],
    });
    finality = strict;
    const completion: ObservationInput = {
      provider: "acme",
      id: "job-1",
      state: "succeeded",
      source: "webhook",
      deliveryId: "w-1",
    };
    expect(await strict.ingest(completion)).toMatchObject({ reason: "parked" });
    addJobs(1, 1, "running");
    expect(await sweep(20, strict)).toMatchObject({ adopted: 1 });
    expect(await strict.getJob({ provider: "acme", id: "job-1" })).toMatchObject({
      state: "succeeded",
      settledBy: "webhook",
    });
    // Later sweeps leave the known job alone; the redelivery is a duplicate of what was applied.
    expect(await sweep(20, strict)).toMatchObject({ adopted: 0 });
    expect(await strict.ingest(completion)).toMatchObject({ reason: "duplicate-delivery" });
    const events = await strict.jobEvents({ provider: "acme", id: "job-1" });
    expect(events.map((e) => [e.source, e.state, e.reason])).toEqual([
      ["webhook", "succeeded", "parked"],
      ["discovery", "running", null],
      ["webhook", "succeeded", null],
      ["webhook", "succeeded", "duplicate-delivery"],
    ]);
  });

  it("leaves alone a job known already and one older than the lookback", async () => {
    await finality.register({ provider: "acme", id: "job-1", kind: "k" });
    fake.addJob("job-1", [{ afterMs: 0, state: "succeeded" }]);
    fake.addJob("old", [{ afterMs: 0, state: "succeeded" }], { createdAt: Date.now() - 49 * HOUR });
    expect(await sweep()).toMatchObject({ listed: 2, adopted: 0 });
    expect(await finality.getJob({ provider: "acme", id: "job-1" })).toMatchObject({ state: "pending" });
    expect(await finality.getJob({ provider: "acme", id: "old" })).toBeNull();
  });

  it("skips a listed id that breaks the id rule, counts it refused, and adopts the rest of the page", async () => {
    addJobs(1, 2);
    fake.addJob("..", [{ afterMs: 0, state: "running" }]);
    addJobs(3, 4);
    const result = await sweep();
    expect(result).toMatchObject({ listed: 5, adopted: 4, refused: 1, done: true });
    expect(result.failed).toBeUndefined();
    expect(await ids()).toEqual(["job-1", "job-2", "job-3", "job-4"]);
    // The cursor moved past it: the next sweep neither fails on it nor adopts anything.
    expect(await sweep()).toMatchObject({ adopted: 0, done: true });
  });
});
