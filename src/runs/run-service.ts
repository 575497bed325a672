import { uuidv7 } from "uuidv7";
import type { Random } from "../core/clock.js";
import { FinalityError } from "../core/errors.js";
import { inSendingOrder } from "../core/in-sending-order.js";
import {
  type Attempt,
  DEFAULT_MAX_UNSTARTED_RELEASES,
  RUNS_PROVIDER,
  type Run,
  type RunEvent,
} from "../core/run-model.js";
import type { Finality } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import { registerInTx } from "../engine/ingest.js";
import type { RunPage, RunQuery } from "../store/run-store.js";
import {
  type EventResult,
  type HeartbeatResult,
  heartbeat,
  type KindScope,
  recordWorkerEvent,
} from "./run-callbacks.js";
import { type Claimed, claimUnlessAborted, claimWithin } from "./run-claims.js";
import { type RunContext, runInTx, writeRunChange } from "./run-context.js";
import { createRunNotifier } from "./run-notifier.js";
import { DEFAULT_RUN_RETRY, newRun, type RunRetryPolicy, requestCancel } from "./run-transitions.js";
import { type SweepCounts, sweepLeases } from "./sweep-leases.js";
import type { WorkerEvent } from "./worker-event.js";

export interface RunServiceOptions {
  finality: Finality;
  retry?: Partial<RunRetryPolicy>;
  /** Attempts per run unless the run says otherwise (default 3). */
  defaultMaxAttempts?: number;
  /** Lease granted when a claim does not ask (default 30 s). */
  defaultLeaseSeconds?: number;
  /** Longest long-poll a claim may ask for (default 30 s). */
  maxWaitSeconds?: number;
  /** How often a waiting claim looks again without a wake-up (default 500 ms). */
  recheckMs?: number;
  /**
   * How many times a run's lease may run out before its worker's first heartbeat, the run given
   * back with the attempt refunded, before the next such expiry ends it `lost` with
   * `REMOTE_RUN_LEASE_EXPIRED_BEFORE_START` (default 5; 0: at the first).
   */
  maxUnstartedReleases?: number;
  random?: Random;
  newId?: () => string;
}

export interface EnqueueRequest {
  kind: string;
  input?: unknown;
  idempotencyKey?: string | undefined;
  maxAttempts?: number | undefined;
}

export interface ClaimOptions {
  workerId: string;
  kinds?: readonly string[] | null | undefined;
  leaseSeconds?: number | undefined;
  /** 0 (default): answer at once. */
  waitSeconds?: number | undefined;
  /**
   * True: the claim also records the worker's `started`, so the run is `running` when it
   * answers and the worker sends no `started` itself (its reports take any sequence). Its lease
   * running out is then a lost attempt, not a release before start: the worker begins as soon
   * as it has the answer, so the server counts the attempt from the claim.
   */
  start?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

/** The claim a worker's end asks for with it: as a claim's options, for the end's worker, without a wait. */
interface NextClaimOptions {
  kinds?: readonly string[] | null | undefined;
  leaseSeconds?: number | undefined;
  start?: boolean | undefined;
  signal?: AbortSignal | undefined;
}

export interface RunWithAttempts {
  run: Run;
  attempts: Attempt[];
}

export interface RunService {
  enqueue(request: EnqueueRequest): Promise<{ run: Run; created: boolean }>;
  claim(options: ClaimOptions): Promise<Claimed | null>;
  heartbeat(
    attemptId: string,
    request: { generation: number; leaseSeconds?: number | undefined },
    scope?: KindScope,
  ): Promise<HeartbeatResult>;
  /**
   * Records a worker's report; with `next` (an end only), claims the same worker's next run in
   * the same transaction (`EventResult.next`; a retried end answers the claim its first made).
   */
  recordEvent(
    attemptId: string,
    event: WorkerEvent,
    scope?: KindScope,
    next?: NextClaimOptions,
  ): Promise<EventResult>;
  /** Cancels a queued run at once; flags a dispatched or running one for its worker. */
  cancel(runId: string): Promise<Run>;
  getRun(runId: string): Promise<RunWithAttempts | null>;
  listRuns(query: RunQuery): Promise<RunPage>;
  runEvents(runId: string, page?: { limit?: number; after?: number }): Promise<RunEvent[]>;
  /** Expires every lease due now (at most `limit`, default 500), one transaction each. */
  sweepOnce(limit?: number): Promise<SweepCounts>;
  /** Answers waiting claims (204) at once, and every later one; for shutdown, before the server closes. */
  close(): void;
}

/** The runs API over the ledger: enqueue, claim with lease, heartbeat, callbacks, cancel, sweep. */
export function createRunService(options: RunServiceOptions): RunService {
  const finality = engineOf(options.finality);
  const ctx: RunContext = {
    finality,
    random: options.random ?? Math.random,
    retry: { ...DEFAULT_RUN_RETRY, ...options.retry },
    notifier: createRunNotifier(),
    newId: options.newId ?? uuidv7,
    maxUnstartedReleases: maxUnstartedReleasesOf(options.maxUnstartedReleases),
  };
  const defaultMaxAttempts = options.defaultMaxAttempts ?? 3;
  const defaultLeaseMs = leaseMsOf(options.defaultLeaseSeconds ?? 30);
  const maxWaitMs = (options.maxWaitSeconds ?? 30) * 1000;
  const recheckMs = options.recheckMs ?? 500;

  async function enqueue(request: EnqueueRequest): Promise<{ run: Run; created: boolean }> {
    return runInTx(ctx, async (tx, effects) => {
      const now = finality.clock.now();
      if (request.idempotencyKey !== undefined) {
        const existing = await tx.getRunByIdempotencyKey(request.idempotencyKey);
        if (existing !== null) {
          if (existing.kind !== request.kind) {
            throw new FinalityError(
              "conflict",
              `idempotency key already used for a run of kind "${existing.kind}"`,
              { details: { id: existing.id, field: "idempotencyKey" } },
            );
          }
          return { run: existing, created: false };
        }
      }
      const run = newRun(
        {
          id: ctx.newId(),
          kind: request.kind,
          input: request.input,
          idempotencyKey: request.idempotencyKey,
          maxAttempts: request.maxAttempts ?? defaultMaxAttempts,
        },
        now,
      );
      const queued = {
        dedupeKey: `run:${run.id}:queued`,
        runId: run.id,
        attemptId: null,
        actor: "api" as const,
        type: "run.queued",
        at: now,
        detail: { kind: run.kind, maxAttempts: run.maxAttempts },
      };
      // The mirror job's read goes first (on PostgreSQL with BEGIN); the run and its event go out
      // beside the mirror's insert, and the COMMIT behind them: two round trips in all.
      const insertRunAndEvent = async () => {
        const [inserted] = await inSendingOrder([
          tx.insertRun(run, "beside"),
          tx.appendRunEvent(queued, "beside"),
        ]);
        if (!inserted)
          throw new FinalityError(
            "version-conflict",
            "a run with this id or idempotency key was just inserted",
            {
              details: { id: run.id },
            },
          );
      };
      await registerInTx(
        tx,
        { provider: RUNS_PROVIDER, id: run.id, kind: run.kind },
        finality.contextFor(RUNS_PROVIDER, now),
        "api",
        { endsTransaction: true, beside: insertRunAndEvent },
      );
      effects.runQueued = true;
      return { run, created: true };
    });
  }

  async function cancel(runId: string): Promise<Run> {
    return runInTx(ctx, async (tx, effects) => {
      const run = await tx.getRun(runId);
      if (run === null) throw new FinalityError("not-found", `no run ${runId}`, { details: { id: runId } });
      const now = finality.clock.now();
      const next = requestCancel(run, now);
      if (next === null) return run;
      await writeRunChange(tx, ctx, run, next, "api", effects);
      await tx.appendRunEvent({
        dedupeKey: `run:${run.id}:cancel:${next.status}`,
        runId: run.id,
        attemptId: run.currentAttemptId,
        actor: "api",
        type: next.status === "cancelled" ? "run.cancelled" : "run.cancel_requested",
        at: now,
        detail: { previousStatus: run.status },
      });
      return next;
    });
  }

  return {
    enqueue,
    cancel,
    claim(claim) {
      const request = {
        workerId: claim.workerId,
        kinds: claim.kinds ?? null,
        leaseMs: claim.leaseSeconds !== undefined ? leaseMsOf(claim.leaseSeconds) : defaultLeaseMs,
        start: claim.start === true,
      };
      const waitMs = Math.min(Math.max(0, (claim.waitSeconds ?? 0) * 1000), maxWaitMs);
      if (waitMs === 0 || ctx.notifier.closed) return claimUnlessAborted(ctx, request, claim.signal);
      return claimWithin(ctx, request, waitMs, recheckMs, claim.signal);
    },
    heartbeat(attemptId, request, scope = null) {
      const leaseMs = request.leaseSeconds !== undefined ? leaseMsOf(request.leaseSeconds) : undefined;
      return heartbeat(ctx, attemptId, { generation: request.generation, leaseMs }, scope);
    },
    recordEvent(attemptId, event, scope = null, next) {
      if (next === undefined) return recordWorkerEvent(ctx, attemptId, event, scope);
      return recordWorkerEvent(ctx, attemptId, event, scope, {
        kinds: next.kinds ?? null,
        leaseMs: next.leaseSeconds !== undefined ? leaseMsOf(next.leaseSeconds) : defaultLeaseMs,
        start: next.start === true,
        signal: next.signal,
      });
    },
    async getRun(runId) {
      const run = await finality.store.getRun(runId);
      if (run === null) return null;
      return { run, attempts: await finality.store.runAttempts(runId) };
    },
    listRuns: (query) => finality.store.listRuns(query),
    runEvents: (runId, page) => finality.store.runEvents(runId, page),
    sweepOnce: (limit = 500) => sweepLeases(ctx, limit),
    close: () => ctx.notifier.close(),
  };
}

function maxUnstartedReleasesOf(value: number | undefined): number {
  if (value === undefined) return DEFAULT_MAX_UNSTARTED_RELEASES;
  if (!Number.isSafeInteger(value) || value < 0)
    throw new FinalityError(
      "invalid-config",
      `maxUnstartedReleases must be a whole number >= 0, not ${value}`,
      {
        details: { field: "maxUnstartedReleases" },
      },
    );
  return value;
}

/** Whole milliseconds: a lease of 1.0005 s is 1,001 ms (PostgreSQL keeps leases as bigint). */
function leaseMsOf(seconds: number): number {
  return Math.round(seconds * 1000);
}
