import { describe, expect, it } from "vitest";
import type { Job } from "../../../src/core/model.js";
import { CANONICAL_STATES, isTerminal } from "../../../src/core/states.js";
import type { JobQuery } from "../../../src/store/store.js";
import { makeEffect, makeEvent, makeJob } from "../../helpers/records.js";
import { type ContractScope, collectPages, insertEffects, insertJobs } from "./harness.js";

/** 35 jobs spread over every state, two providers, three kinds and the stuck flag. */
function sampleJobs(): Job[] {
  return Array.from({ length: 35 }, (_, i) =>
    makeJob({
      provider: i % 3 === 0 ? "openai" : "generic",
      id: `job-${String(i).padStart(2, "0")}`,
      state: CANONICAL_STATES[i % CANONICAL_STATES.length]!,
      kind: i % 3 === 1 ? "batch" : i % 5 === 0 ? "run" : null,
      stuck: i % 4 === 0 && !isTerminal(CANONICAL_STATES[i % CANONICAL_STATES.length]!),
    }),
  );
}

const queries: [string, JobQuery, (job: Job) => boolean][] = [
  ["no filter", {}, () => true],
  ["state", { state: "running" }, (j) => j.state === "running"],
  ["terminal state", { state: "expired" }, (j) => j.state === "expired"],
  ["provider", { provider: "openai" }, (j) => j.provider === "openai"],
  ["kind", { kind: "batch" }, (j) => j.kind === "batch"],
  ["stuck", { stuck: true }, (j) => j.stuck],
  ["not stuck", { stuck: false }, (j) => !j.stuck],
  ["open", { open: true }, (j) => !isTerminal(j.state)],
  [
    "open from one provider",
    { open: true, provider: "generic" },
    (j) => !isTerminal(j.state) && j.provider === "generic",
  ],
  ["nothing matches", { provider: "nobody" }, () => false],
];

const ids = (jobs: readonly Job[]) => jobs.map((j) => `${j.provider}/${j.id}`).sort();

export function describeQueries(scope: ContractScope): void {
  describe("listJobs", () => {
    it.each(queries)("filters: %s", async (_name, query, expected) => {
      const jobs = sampleJobs();
      await insertJobs(scope.store(), jobs);
      const page = await scope.store().listJobs({ ...query, limit: 500 });
      expect(page.nextCursor).toBeNull();
      expect(ids(page.items)).toEqual(ids(jobs.filter(expected)));
    });

    it.each([1, 4, 7, 35, 36])("cursor paging with limit %i visits every job exactly once", async (limit) => {
      const jobs = sampleJobs();
      await insertJobs(scope.store(), jobs);
      const { items, pages } = await collectPages((cursor) => scope.store().listJobs({ limit, cursor }));
      expect(items).toHaveLength(jobs.length);
      expect(ids(items)).toEqual(ids(jobs));
      expect(pages).toBe(Math.max(1, Math.ceil(jobs.length / limit)));
    });

    it("cursor paging keeps the filter", async () => {
      const jobs = sampleJobs();
      await insertJobs(scope.store(), jobs);
      const { items } = await collectPages((cursor) =>
        scope.store().listJobs({ open: true, limit: 3, cursor }),
      );
      expect(ids(items)).toEqual(ids(jobs.filter((j) => !isTerminal(j.state))));
    });

    it("a job inserted while paging does not make a page repeat or skip an older job", async () => {
      const jobs = sampleJobs();
      await insertJobs(scope.store(), jobs);
      const first = await scope.store().listJobs({ limit: 10 });
      await insertJobs(scope.store(), [makeJob({ id: "late" })]);
      const rest = await collectPages((cursor) =>
        scope.store().listJobs({ limit: 10, cursor: cursor ?? first.nextCursor! }),
      );
      const seen = [...first.items, ...rest.items].filter((j) => j.id !== "late");
      expect(ids(seen)).toEqual(ids(jobs));
    });
  });

  describe("jobEvents and listEffects", () => {
    it("returns a job's events in the order they were appended, and pages with `after`", async () => {
      const key = { provider: "generic", id: "job-1" };
      const states = ["pending", "running", "weird", "running", "succeeded", "failed"];
      await scope.store().transaction(async (tx) => {
        for (const [i, state] of states.entries()) {
          await tx.appendEvent(makeEvent({ ...key, state, at: 1000 - i }));
          await tx.appendEvent(makeEvent({ provider: "generic", id: "other", state }));
        }
      });
      const events = await scope.store().jobEvents(key);
      expect(events.map((e) => e.state)).toEqual(states);
      expect(events.every((e) => e.id === "job-1" && e.provider === "generic")).toBe(true);
      const seqNos = events.map((e) => e.seqNo);
      expect(seqNos).toEqual([...seqNos].sort((a, b) => a - b));
      expect(new Set(seqNos).size).toBe(seqNos.length);
      const firstTwo = await scope.store().jobEvents(key, { limit: 2 });
      expect(firstTwo).toEqual(events.slice(0, 2));
      const after = await scope.store().jobEvents(key, { after: firstTwo[1]!.seqNo, limit: 3 });
      expect(after).toEqual(events.slice(2, 5));
    });

    it("lists effects by status and job, paging through all of them", async () => {
      const effects = Array.from({ length: 12 }, (_, i) =>
        makeEffect({ jobId: `job-${i % 4}`, name: `e${i}`, status: i % 3 === 0 ? "dead" : "pending" }),
      );
      await insertEffects(scope.store(), effects);
      const dead = await scope.store().listEffects({ status: "dead" });
      expect(dead.items.map((e) => e.id).sort()).toEqual(
        effects
          .filter((e) => e.status === "dead")
          .map((e) => e.id)
          .sort(),
      );
      const all = await collectPages((cursor) => scope.store().listEffects({ limit: 5, cursor }));
      expect(all.items.map((e) => e.id).sort()).toEqual(effects.map((e) => e.id).sort());
      const forJob = await scope.store().listEffects({ jobId: "job-1", provider: "generic" });
      expect(forJob.items).toHaveLength(3);
    });
  });
}
