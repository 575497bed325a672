import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { register } from "../../src/core/reducer.js";
import { finalJob, JOB, observationSequenceArb } from "../helpers/observations.js";
import { makeJob, T0 } from "../helpers/records.js";

const NOW = T0 + 1_000;

describe("register", () => {
  it("creates a registered pending job when none exists", () => {
    const result = register(null, { ...JOB, kind: "batch", metadata: { user: 7 } }, NOW);
    expect(result.created).toBe(true);
    expect(result.next).toMatchObject({
      ...JOB,
      state: "pending",
      version: 1,
      registered: true,
      kind: "batch",
      metadata: { user: 7 },
      submittedAt: NOW,
      settledAt: null,
    });
  });

  it("marks an adopted job registered and fills kind and metadata without touching its state", () => {
    const adopted = makeJob({ ...JOB, state: "succeeded", registered: false, version: 2, result: { ok: 1 } });
    const result = register(adopted, { ...JOB, kind: "batch", metadata: { user: 7 } }, NOW);
    expect(result).toEqual({
      created: false,
      next: {
        ...adopted,
        registered: true,
        kind: "batch",
        metadata: { user: 7 },
        version: 3,
        updatedAt: NOW,
      },
    });
  });

  it("never overwrites an existing kind or metadata", () => {
    const existing = makeJob({ ...JOB, kind: "a", metadata: { v: 1 }, registered: true });
    expect(register(existing, { ...JOB, kind: "b", metadata: { v: 2 } }, NOW)).toEqual({
      created: false,
      next: null,
    });
  });

  it("fills only what is missing", () => {
    const existing = makeJob({ ...JOB, kind: "a", metadata: null, registered: true });
    const result = register(existing, { ...JOB, kind: "b", metadata: { v: 2 } }, NOW);
    expect(result.next).toMatchObject({ kind: "a", metadata: { v: 2 }, version: existing.version + 1 });
  });

  it("is a no-op for a registered job when nothing is new", () => {
    const existing = makeJob({ ...JOB, kind: "a", metadata: { v: 1 }, registered: true });
    expect(register(existing, { ...JOB }, NOW).next).toBeNull();
  });

  it("never changes the state, version by at most one, of any job the reducer can produce", () => {
    fc.assert(
      fc.property(
        observationSequenceArb,
        fc.option(fc.string({ minLength: 1, maxLength: 8 }), { nil: undefined }),
        fc.option(fc.jsonValue(), { nil: undefined }),
        (observations, kind, metadata) => {
          const job = finalJob(observations)!;
          const result = register(job, { ...JOB, kind, metadata }, NOW);
          expect(result.created).toBe(false);
          if (result.next === null) return;
          const { registered, kind: k, metadata: m, version, updatedAt, ...rest } = result.next;
          const { registered: _r, kind: _k, metadata: _m, version: v0, updatedAt: _u, ...before } = job;
          expect(rest).toEqual(before);
          expect(version).toBe(v0 + 1);
          expect(registered).toBe(true);
          expect(k).toBe(job.kind ?? kind ?? null);
          expect(m).toEqual(job.metadata ?? metadata ?? null);
          expect(updatedAt).toBe(NOW);
        },
      ),
    );
  });
});
