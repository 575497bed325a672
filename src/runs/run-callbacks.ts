import { FinalityError } from "../core/errors.js";
import { inSendingOrder } from "../core/in-sending-order.js";
import type { Attempt, Run } from "../core/run-model.js";
import type { WriteEnd } from "../store/run-store.js";
import type { StoreTx } from "../store/store.js";
import { type Claimed, claimInTx, withdrawClaim } from "./run-claims.js";
import {
  attemptEventKey,
  loadAttempt,
  type RunContext,
  retryDelayFor,
  runInTx,
  type TxSideEffects,
  workerAttemptEvent,
  writeAttempt,
  writeRunChange,
} from "./run-context.js";
import { extendLease } from "./run-transitions.js";
import { expireInTx } from "./sweep-leases.js";
import {
  applyWorkerEvent,
  checkFence,
  type FenceRefusal,
  type WorkerEvent,
  workerEventApplies,
} from "./worker-event.js";

/** Kinds a worker pool may touch; null for every kind. */
export type KindScope = readonly string[] | null;

export interface HeartbeatResult {
  attempt: Attempt;
  run: Run;
}

type EventOutcome = "applied" | "duplicate" | "out_of_order";

export interface EventResult {
  outcome: EventOutcome;
  attempt: Attempt;
  run: Run;
  /** What the call claimed with its end (`next`): a run and its lease, or null; absent unless asked. */
  next?: Claimed | null;
}

/**
 * The result with what its end claimed. Written out rather than spread: each key after a spread
 * in a literal costs V8 a runtime call and a new hidden class, and a worker's every end takes this.
 */
function withNext(result: EventResult, next: Claimed | null): EventResult {
  return { outcome: result.outcome, attempt: result.attempt, run: result.run, next };
}

/**
 * A claim asked for with a worker's end (`next`), for the same worker: made in the end's own
 * transaction, the worker's next run comes back with the answer to its last.
 */
interface NextClaim {
  kinds: readonly string[] | null;
  leaseMs: number;
  start: boolean;
  /** Aborts when the caller has gone away: no claim is made, and one made meanwhile is given back. */
  signal?: AbortSignal | undefined;
}

/**
 * An attempt and its run that passed the fence; `seen`: the detail of the call's event when it is
 * recorded already (a retried call), else null.
 */
type Fenced = { attempt: Attempt; run: Run; seen: Record<string, unknown> | null };

/** A worker's call: the generation it claims, the kinds its pool may touch, what it records. */
interface FencedCall {
  generation: number;
  scope: KindScope;
  forHeartbeat: boolean;
  /** The dedupe key of the event the call records, looked up with the loads (one round trip). */
  eventKey?: string;
}

const REFUSAL_TEXT: Record<FenceRefusal, string> = {
  "stale-generation": "this generation is not the attempt's: another worker holds the run now",
  "lease-lost": "the attempt's lease expired or was released: stop working on it",
  superseded: "a newer attempt holds the run: stop working on it",
  "lease-expired": "the attempt's lease expired before this call: stop working on it",
  "attempt-finished": "the attempt has already finished",
};

/**
 * Loads an attempt and its run (and whether the call's event is recorded already) and passes the
 * fence. A lease found past its expiry is expired here exactly as the sweeper would (same
 * decision, same dedupe keys) before the call is refused, so the 409 and the ledger agree and the
 * run is free for another worker at once.
 */
async function fenced(
  tx: StoreTx,
  ctx: RunContext,
  attemptId: string,
  call: FencedCall,
  effects: TxSideEffects,
): Promise<Fenced | { refused: FenceRefusal }> {
  // Read after the attempt's row lock, which every writer of its events holds: a key not seen
  // here is not written by anyone else before this transaction ends.
  const [loaded, seen] = await Promise.all([
    loadAttempt(tx, attemptId),
    call.eventKey === undefined ? null : tx.runEventDetail(call.eventKey),
  ]);
  if (loaded === null || (call.scope !== null && !call.scope.includes(loaded.run.kind))) {
    throw new FinalityError("not-found", `no attempt ${attemptId}`, { details: { id: attemptId } });
  }
  const { attempt, run } = loaded;
  const fence = checkFence(run, attempt, call.generation, ctx.finality.clock.now(), call.forHeartbeat);
  if (fence.kind === "ok") return { attempt, run, seen };
  if (fence.reason === "lease-expired") await expireInTx(tx, ctx, attemptId, effects);
  return { refused: fence.reason };
}

/** What a fenced call does to the attempt and run it loaded, at `now`, in their transaction. */
type FencedWork<T> = (tx: StoreTx, effects: TxSideEffects, loaded: Fenced, now: number) => Promise<T>;

/**
 * Runs `work` in one transaction, on an attempt that passed the fence. A refusal is thrown as a
 * 409 (`stale-generation`) only once the transaction has committed: it may have expired the lease.
 */
async function inFencedTx<T>(
  ctx: RunContext,
  attemptId: string,
  call: FencedCall,
  work: FencedWork<T>,
): Promise<T> {
  const result = await runInTx(ctx, async (tx, effects): Promise<{ refused: FenceRefusal } | { done: T }> => {
    const loaded = await fenced(tx, ctx, attemptId, call, effects);
    if ("refused" in loaded) return loaded;
    return { done: await work(tx, effects, loaded, ctx.finality.clock.now()) };
  });
  if ("refused" in result) throw refusal(attemptId, result.refused);
  return result.done;
}

function refusal(attemptId: string, reason: FenceRefusal): FinalityError {
  return new FinalityError("stale-generation", REFUSAL_TEXT[reason], { details: { id: attemptId, reason } });
}

/** Extends a live lease; answers whether a cancel was requested. 409 (`stale-generation`) when fenced off. */
export async function heartbeat(
  ctx: RunContext,
  attemptId: string,
  request: { generation: number; leaseMs?: number | undefined },
  scope: KindScope,
): Promise<HeartbeatResult> {
  const call = { generation: request.generation, scope, forHeartbeat: true };
  return inFencedTx(ctx, attemptId, call, async (tx, _effects, { attempt, run }, now) => {
    const next = extendLease(attempt, request.leaseMs ?? attempt.leaseMs, now);
    const starting = attempt.status === "claimed";
    // Independent writes, the call's last, sent together with the COMMIT (one round trip on PostgreSQL).
    await inSendingOrder([
      writeAttempt(tx, attempt, next, starting ? "beside" : "last"),
      starting
        ? tx.appendRunEvent(
            workerAttemptEvent(attempt, "starting", "attempt.starting", now, {
              generation: attempt.generation,
            }),
            "last",
          )
        : null,
    ]);
    return { attempt: next, run };
  });
}

/**
 * Records a worker callback. The fence first (409 when stale); then the event is appended with
 * the key `attempt:{attemptId}:seq:{sequence}`, so a repeated sequence is a `duplicate` that
 * changes nothing; an event that does not move the attempt forward (by status rank, then
 * sequence) is recorded as `out_of_order`; otherwise attempt and run change together, and the
 * mirror job follows.
 *
 * `next` (an end only: `succeeded`, `failed`, `cancelled`): the same transaction claims the
 * worker's next run, and its event names the attempt claimed (`nextAttemptId`). A retried end
 * (`duplicate`) claims nothing: it answers the claim its first call made while that attempt
 * still holds its lease, else null, so an answer lost on the way strands no run.
 */
export async function recordWorkerEvent(
  ctx: RunContext,
  attemptId: string,
  event: WorkerEvent,
  scope: KindScope,
  next?: NextClaim,
): Promise<EventResult> {
  if (next !== undefined && !isEndEvent(event.type))
    throw new FinalityError(
      "invalid-request",
      `next: only an end (succeeded, failed, cancelled) claims the next run`,
      {
        details: { field: "next" },
      },
    );
  const eventKey = attemptEventKey(attemptId, `seq:${event.sequence}`);
  const call = { generation: event.generation, scope, forHeartbeat: false, eventKey };
  const result = await inFencedTx(
    ctx,
    attemptId,
    call,
    async (tx, effects, { attempt, run, seen }, now): Promise<EventResult> => {
      if (seen !== null) {
        const duplicate: EventResult = { outcome: "duplicate", attempt, run };
        if (next === undefined) return duplicate;
        return withNext(duplicate, await claimedBefore(tx, seen.nextAttemptId, now));
      }
      const applies = workerEventApplies(attempt, event);
      const recorded = (claimed?: Claimed | null) =>
        workerAttemptEvent(attempt, `seq:${event.sequence}`, `worker.${event.type}`, now, {
          generation: event.generation,
          sequence: event.sequence,
          applied: applies,
          ...(claimed ? { nextAttemptId: claimed.attempt.id } : {}),
        });
      const record = (end: WriteEnd) => tx.appendRunEvent(recorded(), end);
      const change = applies ? applyWorkerEvent(run, attempt, event, now, retryDelayFor(ctx, run)) : null;
      const outcome = applies ? ("applied" as const) : ("out_of_order" as const);
      const answer =
        change === null
          ? { outcome, attempt, run }
          : { outcome, attempt: change.attempt, run: change.run ?? run };
      if (next === undefined || next.signal?.aborted) {
        // The event, the attempt's write and the run's (with its mirror job) need nothing of each
        // other, and end the call: sent together, the COMMIT with them.
        if (change === null) await record("last");
        else
          await inSendingOrder([
            record("beside"),
            writeAttempt(tx, attempt, change.attempt, change.run === null ? "last" : "beside"),
            change.run === null ? null : writeRunChange(tx, ctx, run, change.run, "worker", effects, true),
          ]);
        return next === undefined ? answer : withNext(answer, null);
      }
      // The end's writes, its mirror's ingest as one statement (no read first), go out with the
      // next claim's pick; its event, naming what was claimed, with the claim's writes and the
      // COMMIT (in the claim's statement of events).
      const request = {
        workerId: attempt.workerId,
        kinds: next.kinds,
        leaseMs: next.leaseMs,
        start: next.start,
      };
      const [, , claimed] = await inSendingOrder([
        change === null ? null : writeAttempt(tx, attempt, change.attempt),
        change?.run == null ? null : writeRunChange(tx, ctx, run, change.run, "worker", effects, "at-once"),
        claimInTx(ctx, tx, effects, request, now, recorded),
      ]);
      return withNext(answer, claimed);
    },
  );
  if (next?.signal?.aborted && result.next) {
    // The caller left while the end committed: its next run would never reach it.
    await withdrawClaim(ctx, result.next);
    return withNext(result, null);
  }
  return result;
}

function isEndEvent(type: WorkerEvent["type"]): boolean {
  return type === "succeeded" || type === "failed" || type === "cancelled";
}

/**
 * What a retried end answers for its `next`: the attempt its first call claimed (`id`, from that
 * call's event), if it still holds the run with a live lease; else null (nothing is claimed anew:
 * a worker that lost two answers in a row would otherwise strand a run each time).
 */
async function claimedBefore(tx: StoreTx, id: unknown, now: number): Promise<Claimed | null> {
  if (typeof id !== "string") return null;
  const loaded = await loadAttempt(tx, id);
  if (loaded === null) return null;
  const { attempt, run } = loaded;
  const holds =
    attempt.generation === run.generation &&
    (attempt.status === "claimed" || attempt.status === "starting" || attempt.status === "running") &&
    attempt.leaseExpiresAt !== null &&
    attempt.leaseExpiresAt > now;
  return holds ? { attempt, run } : null;
}
