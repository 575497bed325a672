import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { effectRetryDecision, HINT_CEILING_MS, reconcileDelayMs } from "../../src/core/backoff.js";
import { availableTokens, fullBucket, takeToken } from "../../src/core/token-bucket.js";

const backoff = { minMs: 30_000, maxMs: 900_000 };

describe("reconcile backoff", () => {
  it("stays within [min, min·2^n capped] for any attempt count and random draw", () => {
    fc.assert(
      fc.property(
        fc.nat(100),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempts, draw) => {
          const delay = reconcileDelayMs(attempts, backoff, () => draw);
          const ceiling = Math.min(backoff.maxMs, backoff.minMs * 2 ** attempts);
          expect(delay).toBeGreaterThanOrEqual(backoff.minMs);
          expect(delay).toBeLessThanOrEqual(ceiling);
        },
      ),
    );
  });

  it("grows with attempts and is capped", () => {
    const top = (n: number) => reconcileDelayMs(n, backoff, () => 0.999999);
    expect(top(1)).toBeLessThan(top(2));
    expect(top(2)).toBeLessThan(top(4));
    expect(top(10)).toBeLessThanOrEqual(backoff.maxMs);
    expect(top(10)).toBeGreaterThan(backoff.maxMs * 0.99);
    expect(reconcileDelayMs(0, backoff, () => 0.7)).toBe(backoff.minMs);
  });

  it("honours a provider's hint (Retry-After) as a floor", () => {
    expect(reconcileDelayMs(0, backoff, () => 0, 3_600_000)).toBe(3_600_000);
    expect(reconcileDelayMs(5, backoff, () => 0.5, 1_000)).toBeGreaterThan(1_000);
  });

  it("never lets a hint push the next check past a day (a year-long Retry-After included)", () => {
    expect(reconcileDelayMs(0, backoff, () => 0, 365 * 86_400_000)).toBe(HINT_CEILING_MS);
    expect(reconcileDelayMs(0, { minMs: 1_000, maxMs: 2 * HINT_CEILING_MS }, () => 0, 1e12)).toBe(
      2 * HINT_CEILING_MS,
    );
  });
});

describe("effect retry schedule", () => {
  const policy = { scheduleMs: [5_000, 30_000, 120_000], maxAgeMs: 86_400_000 };
  it("follows the schedule within ±20% and repeats its last step", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 50 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, draw) => {
          const decision = effectRetryDecision(attempt, 0, policy, () => draw);
          if (decision.kind !== "retry") throw new Error("expected a retry");
          const base = policy.scheduleMs[Math.min(attempt, 3) - 1] as number;
          expect(decision.delayMs).toBeGreaterThanOrEqual(base * 0.8);
          expect(decision.delayMs).toBeLessThanOrEqual(base * 1.2);
        },
      ),
    );
  });
  it("is dead past the maximum age or attempts", () => {
    expect(effectRetryDecision(1, 86_399_000, policy, () => 0).kind).toBe("dead");
    expect(effectRetryDecision(3, 0, { ...policy, maxAttempts: 3 }, () => 0).kind).toBe("dead");
    expect(effectRetryDecision(2, 0, { ...policy, maxAttempts: 3 }, () => 0).kind).toBe("retry");
  });
  it("honours a Retry-After up to the maximum age: one last attempt then, not dead at once", () => {
    expect(effectRetryDecision(1, 0, policy, () => 0.5, 3_600_000)).toEqual({
      kind: "retry",
      delayMs: 3_600_000,
    });
    expect(effectRetryDecision(1, 1_000, policy, () => 0.5, 365 * 86_400_000)).toEqual({
      kind: "retry",
      delayMs: policy.maxAgeMs - 1_000,
    });
  });
});

describe("token bucket", () => {
  it("allows a burst, then one token per 1/rate seconds", () => {
    const limit = { perSecond: 10, burst: 3 };
    let bucket = fullBucket(limit, 0);
    for (let i = 0; i < 3; i++) {
      const take = takeToken(bucket, limit, 0);
      expect(take.taken).toBe(true);
      bucket = take.bucket;
    }
    const empty = takeToken(bucket, limit, 0);
    expect(empty.taken).toBe(false);
    if (!empty.taken) expect(empty.waitMs).toBe(100);
    expect(takeToken(bucket, limit, 100).taken).toBe(true);
  });

  it("says how many tokens are there now without taking one, refilled up to the burst", () => {
    const limit = { perSecond: 2, burst: 3 };
    const full = fullBucket(limit, 0);
    expect(availableTokens(full, limit, 0)).toBe(3);
    expect(availableTokens(full, limit, 60_000)).toBe(3);
    const empty = { tokens: 0, updatedAt: 0 };
    expect(availableTokens(empty, limit, 250)).toBe(0.5);
    expect(availableTokens(empty, limit, 1000)).toBe(2);
  });
});
