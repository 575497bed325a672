import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  ATTEMPT_STATUSES,
  type AttemptStatus,
  LEASE_EXPIRED_BEFORE_START_CODE,
  RUN_STATUSES,
  type RunStatus,
} from "../../src/core/run-model.js";
import {
  decideLeaseExpiry,
  expireLease,
  LEASE_EXPIRY_OUTCOMES,
  type LeaseExpiryOutcome,
} from "../../src/runs/lease-expiry-rules.js";
import { attemptFixture, runFixture } from "./run-fixtures.js";

/**
 * The expected outcomes, written as a table whose rows do NOT overlap (unlike the
 * implementation, which takes the first matching rule): every combination must match exactly
 * one row, so a gap or a contradiction in the table fails the test too.
 */
interface Row {
  attempt: readonly AttemptStatus[];
  due?: boolean;
  run?: readonly RunStatus[];
  sameGeneration?: boolean;
  cancel?: boolean;
  spent?: boolean;
  /** Released unstarted as many times as allowed already (maxUnstartedReleases reached). */
  exhausted?: boolean;
  outcome: LeaseExpiryOutcome;
}
const LIVE = ["claimed", "starting", "running"] as const;
const FINISHED = ["succeeded", "failed", "cancelled"] as const;
const OWNING = ["dispatching", "running"] as const;
const NOT_OWNING = ["queued", "succeeded", "failed", "cancelled", "lost"] as const;

const TABLE: Row[] = [
  { attempt: ["lost", "released"], outcome: "already_expired" },
  { attempt: [...LIVE, ...FINISHED], due: false, outcome: "not_due" },
  { attempt: FINISHED, due: true, outcome: "terminal_released" },
  { attempt: LIVE, due: true, run: NOT_OWNING, outcome: "terminal_released" },
  { attempt: LIVE, due: true, run: OWNING, sameGeneration: false, outcome: "terminal_released" },
  {
    attempt: LIVE,
    due: true,
    run: OWNING,
    sameGeneration: true,
    cancel: true,
    outcome: "cancellation_pending",
  },
  {
    attempt: ["claimed"],
    due: true,
    run: OWNING,
    sameGeneration: true,
    cancel: false,
    exhausted: false,
    outcome: "unstarted_released",
  },
  {
    attempt: ["claimed"],
    due: true,
    run: OWNING,
    sameGeneration: true,
    cancel: false,
    exhausted: true,
    outcome: "unstarted_lost",
  },
  {
    attempt: ["starting", "running"],
    due: true,
    run: OWNING,
    sameGeneration: true,
    cancel: false,
    spent: false,
    outcome: "lost_retry",
  },
  {
    attempt: ["starting", "running"],
    due: true,
    run: OWNING,
    sameGeneration: true,
    cancel: false,
    spent: true,
    outcome: "lost_final",
  },
];

interface Combination {
  runStatus: RunStatus;
  attemptStatus: AttemptStatus;
  cancel: boolean;
  due: boolean;
  sameGeneration: boolean;
  spent: boolean;
  exhausted: boolean;
}

function matches(row: Row, c: Combination): boolean {
  return (
    row.attempt.includes(c.attemptStatus) &&
    (row.due === undefined || row.due === c.due) &&
    (row.run === undefined || row.run.includes(c.runStatus)) &&
    (row.sameGeneration === undefined || row.sameGeneration === c.sameGeneration) &&
    (row.cancel === undefined || row.cancel === c.cancel) &&
    (row.spent === undefined || row.spent === c.spent) &&
    (row.exhausted === undefined || row.exhausted === c.exhausted)
  );
}

function expected(c: Combination): LeaseExpiryOutcome {
  const rows = TABLE.filter((row) => matches(row, c));
  if (rows.length !== 1) throw new Error(`${rows.length} table rows match ${JSON.stringify(c)}`);
  return rows[0]!.outcome;
}

const combination = fc.record({
  runStatus: fc.constantFrom(...RUN_STATUSES),
  attemptStatus: fc.constantFrom(...ATTEMPT_STATUSES),
  cancel: fc.boolean(),
  due: fc.boolean(),
  sameGeneration: fc.boolean(),
  spent: fc.boolean(),
  exhausted: fc.boolean(),
});

/**
 * Concrete records for a combination, with arbitrary times and counts that keep its facts. The
 * run's generation is its attempt count plus its releases before start (as the ledger keeps
 * them: unstartedReleasesOf), so `exhausted` is drawn through the releases and the limit.
 */
const scenario = combination.chain((c) =>
  fc
    .record({
      now: fc.integer({ min: 1_000_000, max: 2_000_000_000_000 }),
      // 0 = expiring exactly now, which is due.
      leaseOffset: c.due ? fc.integer({ min: 0, max: 10_000_000 }) : fc.integer({ min: 1, max: 10_000_000 }),
      maxAttempts: fc.integer({ min: 1, max: 20 }),
      // At least 1 when not exhausted: zero releases allowed leaves no room below the limit.
      maxUnstartedReleases: fc.integer({ min: c.exhausted ? 0 : 1, max: 10 }),
      generationGap: fc.integer({ min: 1, max: 5 }),
    })
    .chain((n) =>
      fc
        .record({
          attemptCount: fc.integer({
            min: c.spent ? n.maxAttempts : 0,
            max: c.spent ? n.maxAttempts + 3 : n.maxAttempts - 1,
          }),
          releases: c.exhausted
            ? fc.integer({ min: n.maxUnstartedReleases, max: n.maxUnstartedReleases + 5 })
            : fc.integer({ min: 0, max: n.maxUnstartedReleases - 1 }),
        })
        .map(({ attemptCount, releases }) => {
          const generation = attemptCount + releases;
          const run = runFixture({
            status: c.runStatus,
            cancelRequested: c.cancel,
            maxAttempts: n.maxAttempts,
            attemptCount,
            generation,
          });
          const attempt = attemptFixture({
            status: c.attemptStatus,
            generation: c.sameGeneration ? generation : generation - n.generationGap,
            leaseExpiresAt: c.due ? n.now - n.leaseOffset : n.now + n.leaseOffset,
          });
          return { c, run, attempt, now: n.now, max: n.maxUnstartedReleases };
        }),
    ),
);

describe("lease expiry decision (pure)", () => {
  it("the table covers every combination exactly once, and names every outcome", () => {
    const seen = new Set<LeaseExpiryOutcome>();
    let combinations = 0;
    for (const runStatus of RUN_STATUSES)
      for (const attemptStatus of ATTEMPT_STATUSES)
        for (const cancel of [false, true])
          for (const due of [false, true])
            for (const sameGeneration of [false, true])
              for (const spent of [false, true])
                for (const exhausted of [false, true]) {
                  seen.add(
                    expected({ runStatus, attemptStatus, cancel, due, sameGeneration, spent, exhausted }),
                  );
                  combinations += 1;
                }
    expect(combinations).toBe(7 * 8 * 2 * 2 * 2 * 2 * 2);
    expect([...seen].sort()).toEqual([...LEASE_EXPIRY_OUTCOMES].sort());
  });

  it("decides what the table says, for any times, counts and generations", () => {
    fc.assert(
      fc.property(scenario, ({ c, run, attempt, now, max }) => {
        expect(decideLeaseExpiry(run, attempt, now, max)).toBe(expected(c));
      }),
      { numRuns: 5_000 },
    );
  });

  it("an expiry applied once changes nothing when applied again (a second sweep)", () => {
    fc.assert(
      fc.property(scenario, ({ run, attempt, now, max }) => {
        const first = expireLease(run, attempt, now, 1_000, max);
        const runAfter = first.run ?? run;
        const attemptAfter = first.attempt ?? attempt;
        const second = expireLease(runAfter, attemptAfter, now, 1_000, max);
        expect(second.run).toBeNull();
        expect(second.attempt).toBeNull();
        expect(second.events).toEqual([]);
        expect(["not_due", "already_expired"]).toContain(second.outcome);
      }),
      { numRuns: 2_000 },
    );
  });

  it("writes bump versions by one, free the lease, never lower the generation, and key events by phase", () => {
    fc.assert(
      fc.property(scenario, ({ run, attempt, now, max }) => {
        const change = expireLease(run, attempt, now, 1_000, max);
        if (change.attempt) {
          expect(change.attempt.version).toBe(attempt.version + 1);
          expect(change.attempt.leaseExpiresAt).toBeNull();
        }
        if (change.run) {
          expect(change.run.version).toBe(run.version + 1);
          expect(change.run.generation).toBe(run.generation);
        }
        for (const event of change.events) {
          expect(event.dedupeKey).toMatch(
            new RegExp(`^lease-expiry:${attempt.id}:${attempt.generation}:[a-z_]+$`),
          );
          expect(event.actor).toBe("reconciler");
        }
        expect(new Set(change.events.map((e) => e.dedupeKey)).size).toBe(change.events.length);
      }),
      { numRuns: 2_000 },
    );
  });

  it("bounds releases before start: five by default, then the run ends lost with its own code", () => {
    const claimed = (releases: number) => {
      const run = runFixture({ status: "dispatching", attemptCount: 1, generation: 1 + releases });
      const attempt = attemptFixture({ status: "claimed", generation: 1 + releases, leaseExpiresAt: 0 });
      return { run, attempt };
    };
    for (const releases of [0, 1, 2, 3, 4]) {
      const { run, attempt } = claimed(releases);
      expect(decideLeaseExpiry(run, attempt, 1), `after ${releases}`).toBe("unstarted_released");
    }
    const { run, attempt } = claimed(5);
    expect(decideLeaseExpiry(run, attempt, 1)).toBe("unstarted_lost");
    const change = expireLease(run, attempt, 1, 1_000);
    expect(change.run).toMatchObject({
      status: "lost",
      settledAt: 1,
      error: { code: LEASE_EXPIRED_BEFORE_START_CODE },
    });
    expect(change.attempt).toMatchObject({
      status: "released",
      leaseExpiresAt: null,
      error: { code: LEASE_EXPIRED_BEFORE_START_CODE },
    });
    expect(change.events.map((e) => e.type)).toEqual(["run.lost"]);
    expect(LEASE_EXPIRED_BEFORE_START_CODE).toBe("REMOTE_RUN_LEASE_EXPIRED_BEFORE_START");
    // 0: the first expiry before start ends the run.
    expect(decideLeaseExpiry(claimed(0).run, claimed(0).attempt, 1, 0)).toBe("unstarted_lost");
  });
});
