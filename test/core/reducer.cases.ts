import type { Job, Observation, UnknownJobPolicy } from "../../src/core/model.js";
import { JOB } from "../helpers/observations.js";
import { makeJob, T0 } from "../helpers/records.js";

/** The seed table for `reduce`: one row per rule of docs/design.md "The reducer". */
export const NOW = T0 + 60_000;
export const obs = (state: string, extra: Partial<Observation> = {}): Observation => ({
  ...JOB,
  state,
  source: "webhook",
  ...extra,
});
export const job = (extra: Partial<Job> = {}): Job => makeJob({ ...JOB, ...extra });
export const running = job({ state: "running", version: 3, maxSeq: 5, maxUpdateTime: T0 + 5_000 });
export const succeeded = job({ state: "succeeded", version: 4, maxSeq: 6, settledBy: "webhook" });

export interface SeedCase {
  name: string;
  job: Job | null;
  obs: Observation;
  policy?: UnknownJobPolicy;
  applied: boolean;
  reason?: string;
  /** Checks on `next`: null means nothing is written. */
  next: null | Partial<Job>;
}

export const cases: SeedCase[] = [
  {
    name: "stale webhook after completion",
    job: succeeded,
    obs: obs("running", { seq: 9 }),
    applied: false,
    reason: "lower-rank",
    next: null,
  },
  {
    name: "terminal then pending",
    job: succeeded,
    obs: obs("pending"),
    applied: false,
    reason: "lower-rank",
    next: null,
  },
  {
    name: "lower rank while open",
    job: running,
    obs: obs("pending", { seq: 99 }),
    applied: false,
    reason: "lower-rank",
    next: null,
  },
  {
    name: "same rank, older seq",
    job: running,
    obs: obs("running", { seq: 4 }),
    applied: false,
    reason: "stale",
    next: null,
  },
  {
    name: "same rank, equal seq",
    job: running,
    obs: obs("running", { seq: 5 }),
    applied: false,
    reason: "stale",
    next: null,
  },
  {
    name: "same rank, newer seq",
    job: running,
    obs: obs("running", { seq: 6 }),
    applied: true,
    next: { state: "running", maxSeq: 6, version: 4, maxUpdateTime: T0 + 5_000 },
  },
  {
    name: "same rank, older updateTime (no seq)",
    job: running,
    obs: obs("running", { updateTime: T0 + 4_000 }),
    applied: false,
    reason: "stale",
    next: null,
  },
  {
    name: "same rank, newer updateTime (no seq)",
    job: running,
    obs: obs("running", { updateTime: T0 + 6_000 }),
    applied: true,
    next: { maxUpdateTime: T0 + 6_000, maxSeq: 5, version: 4 },
  },
  {
    name: "seq wins over updateTime: newer seq, older time",
    job: running,
    obs: obs("running", { seq: 6, updateTime: T0 }),
    applied: true,
    next: { maxSeq: 6, maxUpdateTime: T0 + 5_000 },
  },
  {
    name: "seq wins over updateTime: older seq, newer time",
    job: running,
    obs: obs("running", { seq: 4, updateTime: T0 + 9_000 }),
    applied: false,
    reason: "stale",
    next: null,
  },
  {
    name: "updateTime decides when the job has no seq",
    job: job({ state: "running", maxSeq: null, maxUpdateTime: T0 + 5_000 }),
    obs: obs("running", { seq: 1, updateTime: T0 + 9_000 }),
    applied: true,
    next: { maxSeq: 1, maxUpdateTime: T0 + 9_000 },
  },
  {
    name: "same rank without any ordering key",
    job: job({ state: "running" }),
    obs: obs("running"),
    applied: false,
    reason: "stale",
    next: null,
  },
  {
    name: "higher rank with an older seq and time is applied, maxima kept",
    job: running,
    obs: obs("succeeded", { seq: 1, updateTime: T0 }),
    applied: true,
    next: {
      state: "succeeded",
      maxSeq: 5,
      maxUpdateTime: T0 + 5_000,
      version: 4,
      settledAt: NOW,
      settledBy: "webhook",
    },
  },
  {
    name: "unknown state",
    job: running,
    obs: obs("JOB_STATE_PAUSED"),
    applied: false,
    reason: "unknown-state",
    next: null,
  },
  {
    name: "unknown state, no job",
    job: null,
    obs: obs("weird"),
    applied: false,
    reason: "unknown-state",
    next: null,
  },
  {
    name: "conflicting terminal is flagged",
    job: succeeded,
    obs: obs("failed"),
    applied: false,
    reason: "conflicting-terminal",
    next: { state: "succeeded", conflict: true, version: 5, updatedAt: NOW },
  },
  {
    name: "second conflicting terminal writes nothing",
    job: { ...succeeded, conflict: true },
    obs: obs("expired"),
    applied: false,
    reason: "conflicting-terminal",
    next: null,
  },
  {
    name: "same terminal again",
    job: succeeded,
    obs: obs("succeeded", { seq: 99 }),
    applied: false,
    reason: "duplicate",
    next: null,
  },
  {
    name: "null job adopted",
    job: null,
    obs: obs("running", { seq: 2, kind: "batch" }),
    applied: true,
    next: { state: "running", version: 1, registered: false, maxSeq: 2, kind: "batch", settledAt: null },
  },
  {
    name: "null job adopted terminal is settled",
    job: null,
    obs: obs("failed", { source: "reconcile", error: { code: 7 } }),
    applied: true,
    next: { state: "failed", version: 1, settledAt: NOW, settledBy: "reconcile", error: { code: 7 } },
  },
  {
    name: "null job, registered-only",
    job: null,
    obs: obs("succeeded"),
    policy: "registered-only",
    applied: false,
    reason: "unregistered",
    next: null,
  },
  {
    name: "first terminal settles",
    job: running,
    obs: obs("cancelled", { source: "reconcile", result: { n: 1 } }),
    applied: true,
    next: {
      state: "cancelled",
      settledAt: NOW,
      settledBy: "reconcile",
      nextCheckAt: null,
      stuck: false,
      result: { n: 1 },
    },
  },
];
