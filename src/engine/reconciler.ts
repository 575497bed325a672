import type { Random } from "../core/clock.js";
import { FinalityError, toError } from "../core/errors.js";
import { createIntervalLoop } from "../core/interval-loop.js";
import type { Job } from "../core/model.js";
import {
  availableTokens,
  fullBucket,
  type RateLimit,
  type TokenBucket,
  takeToken,
} from "../core/token-bucket.js";
import { jobLockOrder } from "../store/store.js";
import type { Finality } from "./finality.js";
import { engineOf } from "./finality-engine.js";
import { traceIngest } from "./ingest-tracing.js";
import { tracePoll, traceReconcile } from "./poll-tracing.js";
import { errorCode, type Poller, type PollResult } from "./poller.js";
import { type ReconcilePolicy, recordPollInTx } from "./reconcile-tx.js";
import { captureContext, resumeIn } from "./tracing.js";

export interface ProviderReconcileOptions extends ReconcilePolicy {
  /** Absent: the provider cannot be polled; its jobs are only rescheduled and checked for stuck. */
  poller?: Poller;
  /** Polls in flight at once for this provider (default 10). */
  concurrency?: number;
  rateLimit?: RateLimit;
  /** Time allowed for one poll (default 10 s). */
  timeoutMs?: number;
}

export interface ReconcilerOptions {
  providers: Record<string, ProviderReconcileOptions>;
  /** How often each provider looks for due jobs (default 1 s). */
  tickMs?: number;
  random?: Random;
  onPoll?: (event: {
    provider: string;
    job: Job;
    /** `unpolled`: the provider has no status API; only the schedule and the stuck flag moved. */
    result: PollResult["kind"] | "unpolled" | "error";
    durationMs: number;
    error?: string;
    /** For a failed poll: the URL without credentials, the error code and the HTTP status. */
    url?: string;
    code?: string;
    status?: number;
    /** The job as this poll settled it (the poll was the first to see its terminal state). */
    settled?: Job;
  }) => void;
}

export interface Reconciler {
  start(): void;
  stop(): Promise<void>;
  /**
   * One pass over what is due now, for every provider; resolves when its polls are recorded.
   * With `maxPolls`, stops claiming after that many (a serverless run's subrequest budget): the
   * rest stay due, oldest first, for the next pass.
   */
  runOnce(onProgress?: (done: number) => void, options?: { maxPolls?: number }): Promise<number>;
}

/**
 * The reconciler: for each provider, claims due open jobs (claiming pushes their check time
 * past the poll's lease, so no other reconciler polls them meanwhile), polls them with that
 * provider's own concurrency and rate limit — a slow provider never delays another — and
 * records each answer through the same ingest path as a webhook.
 */
export function createReconciler(finality: Finality, options: ReconcilerOptions): Reconciler {
  const engine = engineOf(finality);
  const random = options.random ?? Math.random;
  const tickMs = options.tickMs ?? 1000;
  // A lane for a provider this ledger does not know could never record a poll: refused here,
  // with the lane's name, rather than failing every poll later.
  for (const provider of Object.keys(options.providers)) {
    try {
      engine.contextFor(provider, engine.clock.now());
    } catch (error) {
      throw new FinalityError(
        "unknown-provider",
        `reconciler lane "${provider}": ${toError(error).message}; give the Finality instance that provider (its \`providers\` option) or drop the lane`,
        { details: { provider } },
      );
    }
  }
  const lanes = Object.entries(options.providers).map(([name, o]) => createLane(name, o));
  let running = false;

  function createLane(provider: string, o: ProviderReconcileOptions) {
    const concurrency = o.concurrency ?? 10;
    const timeoutMs = o.timeoutMs ?? 10_000;
    const inFlight = new Map<string, Promise<void>>();
    let bucket: TokenBucket | null = o.rateLimit ? fullBucket(o.rateLimit, engine.clock.now()) : null;
    let claiming = false;
    let claimAgain = false;

    /** Never rejects: a poll's promise is not awaited by the tick, so a rejection would be unhandled. */
    function pollOne(job: Job): Promise<void> {
      return traceReconcile(job, () => pollAndRecord(job));
    }

    async function pollAndRecord(job: Job): Promise<void> {
      const traced = captureContext();
      const started = engine.clock.now();
      let result: PollResult;
      try {
        result = await tracePoll(job, () =>
          o.poller
            ? o.poller(job, AbortSignal.timeout(timeoutMs))
            : Promise.resolve({ kind: "failed", error: "the provider has no status API configured" }),
        );
      } catch (error) {
        const code = errorCode(error);
        result = { kind: "failed", error: toError(error).message, ...(code ? { code } : {}) };
      }
      const now = engine.clock.now();
      try {
        const recorded = await resumeIn(traced, () =>
          traceIngest({ ...job, source: "reconcile" }, () => {
            const ctx = engine.contextFor(provider, now);
            return engine.store.transaction(
              async (tx) => {
                const outcome = await recordPollInTx(tx, job, result, ctx, o, random);
                if (outcome.effectsFired) tx.afterCommit(engine.announceEffects);
                return outcome;
              },
              { lockOrder: jobLockOrder(job) },
            );
          }),
        );
        // Settled by this poll's own transaction (not by a webhook that came in meanwhile).
        const settled = recorded.job?.settledAt === now && recorded.job.settledBy === "reconcile";
        options.onPoll?.({
          provider,
          job,
          ...(settled && recorded.job ? { settled: recorded.job } : {}),
          result: o.poller ? result.kind : "unpolled",
          durationMs: now - started,
          ...(o.poller ? errorOf(result) : {}),
        });
      } catch (error) {
        // The claim's lease brings the job back; a failing store must not stop the loop.
        try {
          options.onPoll?.({
            provider,
            job,
            result: "error",
            durationMs: now - started,
            error: toError(error).message,
          });
        } catch {
          // A throwing onPoll (the caller's logging) has nowhere left to report to.
        }
      }
    }

    // Settles once every claim started so far has started its polls: stop() waits for it, so no
    // claim finishing after stop() polls a provider with the store closing.
    let claimsSettled: Promise<void> = Promise.resolve();

    function claim(budget?: { remaining: number }): Promise<Promise<void>[]> {
      const started = claimOnce(budget);
      claimsSettled = Promise.all([claimsSettled, started.catch(() => [])]).then(() => undefined);
      return started;
    }

    /** Claims as many due jobs as there are free slots and tokens, and starts their polls. */
    async function claimOnce(budget?: { remaining: number }): Promise<Promise<void>[]> {
      if (claiming) {
        claimAgain = true;
        return [];
      }
      claiming = true;
      const started: Promise<void>[] = [];
      try {
        do {
          claimAgain = false;
          const now = engine.clock.now();
          let free = concurrency - inFlight.size;
          if (bucket && o.rateLimit)
            free = Math.min(free, Math.floor(availableTokens(bucket, o.rateLimit, now)));
          if (budget) free = Math.min(free, budget.remaining);
          if (free <= 0) break;
          // Reserved before the claim's await: the other lanes claim meanwhile from what is left,
          // so together they never exceed the budget; what this claim did not use goes back.
          if (budget) budget.remaining -= free;
          const jobs = await engine.store.claimDueJobs(now, free, now + timeoutMs * 3, [provider]);
          if (budget) budget.remaining += free - jobs.length;
          for (const job of jobs) {
            const key = `${job.provider}\u0000${job.id}`;
            if (inFlight.has(key)) continue;
            if (bucket && o.rateLimit) bucket = takeToken(bucket, o.rateLimit, now).bucket;
            const poll = pollOne(job).finally(() => {
              inFlight.delete(key);
              // A freed slot takes the next due job at once rather than at the next tick.
              if (running) void claim().catch(() => {});
            });
            inFlight.set(key, poll);
            started.push(poll);
          }
        } while (claimAgain);
      } finally {
        claiming = false;
      }
      return started;
    }

    return { provider, claim, inFlight, claimsSettled: () => claimsSettled };
  }

  async function tick(): Promise<void> {
    await Promise.all(lanes.map((lane) => lane.claim().catch(() => [])));
  }

  const ticks = createIntervalLoop(tick, tickMs, undefined, { immediate: true });

  /** The lane a budgeted pass asks first: the one after the last that took a share last time. */
  let firstLane = 0;

  /**
   * One round of a budgeted pass: each lane claims in turn, from what the lanes before it left.
   * Claimed all at once, every lane reserved its share before any claim returned, so the first
   * lanes held the whole budget while they found nothing due and the others got none: with more
   * providers than `maxPolls` / concurrency, the last ones were never polled on Workers. Each
   * round starts after the last lane served, so a backlog on some providers never keeps the
   * budget from the others for good. Only the claims wait on each other, not the polls.
   */
  async function claimInTurn(budget: { remaining: number }): Promise<Promise<void>[]> {
    const started: Promise<void>[] = [];
    const first = firstLane;
    const order = [...lanes.slice(first), ...lanes.slice(0, first)];
    for (const [i, lane] of order.entries()) {
      const polls = await lane.claim(budget);
      if (polls.length > 0) firstLane = (first + i + 1) % lanes.length;
      started.push(...polls);
    }
    return started;
  }

  return {
    start() {
      if (running) return;
      running = true;
      ticks.start();
    },
    async stop() {
      running = false;
      await ticks.stop();
      await Promise.all(lanes.map((lane) => lane.claimsSettled()));
      await Promise.all(lanes.flatMap((lane) => [...lane.inFlight.values()]));
    },
    async runOnce(onProgress, options = {}) {
      const budget = { remaining: options.maxPolls ?? Number.POSITIVE_INFINITY };
      let done = 0;
      const count = () => {
        done++;
        onProgress?.(done);
      };
      for (;;) {
        const polls = await claimInTurn(budget);
        if (polls.length === 0) {
          const pending = lanes.flatMap((lane) => [...lane.inFlight.values()]);
          if (pending.length === 0) return done;
          await Promise.race(pending);
          continue;
        }
        await Promise.all(polls.map((poll) => poll.then(count)));
      }
    },
  };
}

function errorOf(result: PollResult): { error?: string; url?: string; code?: string; status?: number } {
  if (result.kind !== "failed") return {};
  const { error, url, code, status } = result;
  return { error, ...(url ? { url } : {}), ...(code ? { code } : {}), ...(status ? { status } : {}) };
}
