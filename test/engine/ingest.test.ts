import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { manualClock } from "../../src/core/clock.js";
import type { JobEvent } from "../../src/core/model.js";
import { rankOf } from "../../src/core/states.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Finality } from "../../src/engine/finality.js";
import type { IngestOutcome } from "../../src/engine/ingest.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { engineOf } from "../helpers/engine.js";
import { outboxRowsByJob } from "../helpers/race.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { generateWorkload } from "../helpers/timelines.js";

const JOBS = 1_000;
const CHUNK = 100;
// 8 true observations per job (pending, 6 × running, terminal) + 2,000 duplicates = 10,000.
const workload = generateWorkload({ seed: 20260101, jobs: JOBS, runningSteps: 6, duplicateCount: 2_000 });

describe("ingest: 10,000 shuffled observations of 1,000 jobs, in concurrent chunks", () => {
  let dir: TempDir;
  let finality: Finality;
  const outcomes: IngestOutcome[] = [];
  const events = new Map<string, JobEvent[]>();

  beforeAll(async () => {
    dir = tempDir("finality-ingest-");
    const clock = manualClock();
    finality = createFinality({
      store: createSqliteStore({ path: dir.file("ledger.db") }),
      clock,
      effects: [{ name: "notify", handler: async () => {} }],
    });
    const { observations } = workload;
    for (let i = 0; i < observations.length; i += CHUNK) {
      outcomes.push(...(await Promise.all(observations.slice(i, i + CHUNK).map((o) => finality.ingest(o)))));
      clock.advance(1_000);
    }
    for (const { id } of workload.timelines)
      events.set(id, await finality.jobEvents({ provider: "generic", id }, { limit: 10_000 }));
  });
  afterAll(async () => {
    await finality?.close();
    dir?.cleanup();
  });

  it("generated the intended workload", () => {
    expect(workload.observations).toHaveLength(10_000);
    expect(workload.redeliveredIds.size).toBe(1_000);
    expect(outcomes).toHaveLength(10_000);
  });

  it("every job ends in its true final state, settled once", async () => {
    for (const { id, final } of workload.timelines) {
      const job = await finality.getJob({ provider: "generic", id });
      expect(job, id).toMatchObject({ state: final, conflict: false, nextCheckAt: null });
      expect(job!.settledAt).not.toBeNull();
    }
    expect(outcomes.filter((o) => o.settled)).toHaveLength(JOBS);
  });

  it("writes exactly one outbox row per settled job, for its final state", async () => {
    const rows = await outboxRowsByJob(engineOf(finality).store);
    expect(rows.size).toBe(JOBS);
    for (const { id } of workload.timelines) expect(rows.get(id), id).toBe(1);
    const { items } = await engineOf(finality).store.listEffects({
      jobId: workload.timelines[0]!.id,
      provider: "generic",
    });
    expect(items[0]).toMatchObject({
      name: "notify",
      trigger: workload.timelines[0]!.final,
      status: "pending",
    });
  });

  it("records exactly one event per observation", () => {
    const expected = new Map<string, string[]>();
    for (const o of workload.observations)
      expected.set(o.id, [...(expected.get(o.id) ?? []), `${o.state}/${o.deliveryId}`]);
    let total = 0;
    for (const { id } of workload.timelines) {
      const recorded = events.get(id)!.map((e) => `${e.state}/${e.deliveryId}`);
      expect(recorded.sort(), id).toEqual(expected.get(id)!.sort());
      total += recorded.length;
    }
    expect(total).toBe(workload.observations.length);
  });

  it("records a repeated delivery id as duplicate-delivery, once per repeat", () => {
    const all = [...events.values()].flat();
    const redeliveries = all.filter((e) => e.reason === "duplicate-delivery");
    expect(redeliveries).toHaveLength(workload.redeliveredIds.size);
    expect(new Set(redeliveries.map((e) => e.deliveryId))).toEqual(workload.redeliveredIds);
    for (const deliveryId of workload.redeliveredIds) {
      const withId = all.filter((e) => e.deliveryId === deliveryId);
      expect(withId.map((e) => e.reason === "duplicate-delivery").sort()).toEqual([false, true]);
    }
    expect(outcomes.filter((o) => o.reason === "duplicate-delivery")).toHaveLength(
      workload.redeliveredIds.size,
    );
  });

  it("applies states in rank order only, and exactly one terminal per job", () => {
    for (const { id, final } of workload.timelines) {
      const applied = events.get(id)!.filter((e) => e.applied);
      const ranks = applied.map((e) => rankOf(e.state));
      expect(ranks, id).toEqual([...ranks].sort((a, b) => a - b));
      expect(applied.filter((e) => rankOf(e.state) === 2).map((e) => e.state)).toEqual([final]);
    }
  });
});
