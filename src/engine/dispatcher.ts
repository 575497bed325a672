import { DEFAULT_EFFECT_RETRY, type EffectRetryPolicy, effectRetryDecision } from "../core/backoff.js";
import type { Random } from "../core/clock.js";
import { FinalityError, toError } from "../core/errors.js";
import { createIntervalLoop } from "../core/interval-loop.js";
import type { Effect, Job } from "../core/model.js";
import { redactUrlsIn } from "../core/url-redaction.js";
import { yieldToEventLoop } from "../core/yield.js";
import { DeliveryError } from "./delivery-error.js";
import { traceDelivery } from "./delivery-tracing.js";
import type { EffectDelivery } from "./effect-definitions.js";
import type { EffectHandoff } from "./effect-handoff.js";
import { type HeldLease, holdEffectLease } from "./effect-lease.js";
import { type DestinationKind, destinationOf, destinationUrls, type EffectTarget } from "./effect-target.js";
import type { Finality } from "./finality.js";
import { engineOf } from "./finality-engine.js";
import { createHttpEffectDeliverer, httpEffectTarget, type UrlDeliverer } from "./http-effect-target.js";
import { intentAlertSubject } from "./intents.js";
import { captureContext, resumeIn } from "./tracing.js";

export { DeliveryError };

export interface DispatcherOptions {
  /** Deliveries in flight at once (default 50). */
  concurrency?: number;
  /** Time allowed for one delivery, from the moment it is sent (default 15 s). */
  timeoutMs?: number;
  /**
   * How long a claim is held before another dispatcher may take it (default timeout × 4); longer
   * than `timeoutMs`. It covers the whole attempt (loading the job too) and is renewed while the
   * attempt runs; an attempt whose lease could not be renewed is stopped before it runs out, so
   * no two dispatchers ever deliver the same row at once.
   */
  leaseMs?: number;
  /** How often to look for due rows when nothing pokes the dispatcher (default 1 s). */
  pollIntervalMs?: number;
  retry?: Partial<EffectRetryPolicy>;
  random?: Random;
  deliverUrl?: UrlDeliverer;
  /**
   * Where broker effects (`nats`, `amqp`, `redis`) go, by destination; a `url` target here takes
   * the place of `deliverUrl`. Each is one small adapter (engine/brokers/): the outbox's retries,
   * leases and dead letters stay here, the same for every destination.
   */
  targets?: Partial<Record<Exclude<DestinationKind, "handler">, EffectTarget>>;
  /** Called after each attempt, for metrics and logs. */
  onAttempt?: (event: DeliveryAttempt) => void;
  /**
   * Whether this dispatcher takes the effects its ledger's transactions enqueue as they commit,
   * claimed by the transaction itself (one claim's transaction saved per effect, no wait for a
   * poke), while it has room for them. Default: while started (`start` to `stop`); `true` also
   * before `start`, for a dispatcher driven by `runOnce` (handed effects wait for the next run);
   * `false`: never. One dispatcher per ledger takes them; any other claims as usual.
   */
  handoff?: boolean;
}

export interface DeliveryAttempt {
  effect: Effect;
  /** The effect's destination (`url`, `nats`, ...), or null when no effect of its name exists. */
  destination: DestinationKind | null;
  /** The job as the attempt loaded it (absent when it could not be loaded). */
  job?: Job;
  outcome: "delivered" | "retry" | "dead" | "lost-claim";
  durationMs: number;
  error?: string;
}

export interface Dispatcher {
  start(): void;
  /** Stops claiming, waits for deliveries in flight. */
  stop(): Promise<void>;
  /** Wakes the loop now (e.g. after an ingest enqueued effects). */
  poke(): void;
  /**
   * Delivers everything due now and what is enqueued while it runs (at most `limit` claims), up to
   * `concurrency` at once, each ended delivery making room for the next; resolves with how many
   * it claimed once they are finished.
   */
  runOnce(options?: { limit?: number }): Promise<number>;
}

/**
 * The outbox dispatcher: claims due rows under a lease, delivers each with a timeout, and
 * records delivered / retry-with-backoff / dead. At least once, with the same idempotency key
 * on every attempt, so an idempotent receiver acts exactly once.
 */
export function createDispatcher(finality: Finality, options: DispatcherOptions = {}): Dispatcher {
  const engine = engineOf(finality);
  const { store, clock, effects } = engine;
  const concurrency = options.concurrency ?? 50;
  const timeoutMs = options.timeoutMs ?? 15_000;
  const leaseMs = options.leaseMs ?? timeoutMs * 4;
  const pollIntervalMs = options.pollIntervalMs ?? 1000;
  const retry: EffectRetryPolicy = { ...DEFAULT_EFFECT_RETRY, ...options.retry };
  const random = options.random ?? Math.random;
  if (!(leaseMs > timeoutMs))
    throw new FinalityError(
      "invalid-config",
      `the effect lease (${leaseMs} ms) must be longer than the delivery timeout (${timeoutMs} ms): ` +
        "a delivery still in flight when its lease runs out is claimed and sent again, in parallel",
      { details: { leaseMs, timeoutMs } },
    );
  const targets = {
    url: httpEffectTarget(options.deliverUrl ?? createHttpEffectDeliverer({ now: clock.now })),
    ...options.targets,
  };
  const definitions = new Map(effects.map((d) => [d.name, d]));
  // Failures are stored in last_error and logged: no receiver or broker URL may appear there whole.
  const effectUrls = effects.flatMap(destinationUrls);
  const inFlight = new Set<Promise<void>>();
  // Effects claimed by the transactions that enqueued them and handed over (see `handoff`), in
  // the order they committed, waiting for a slot. Room is looked at as each is enqueued (no slot
  // is reserved, so a rollback leaks none): transactions in flight together may hand over a few
  // more than there are slots, bounded by how many run at once; those wait here.
  const handed: Effect[] = [];
  // The job each handed effect's transaction committed (undefined: its first attempt reads it).
  const handedJobs: (Job | undefined)[] = [];
  let running = false;
  let pumping = false;
  let again = false;
  // Rows may be due that no claim took: the last claim filled every free slot, or a wake-up
  // found none free. Only then does a delivery's end claim again (a claim is a transaction);
  // otherwise the next poke (effects enqueued here) or tick (retries come due, other replicas'
  // rows) does. Without it every delivery cost a second, empty claim.
  let backlog = true;
  // The commit that pokes next handed its effects over (each transaction hands them over just
  // before it announces them): nothing of it is left to claim, unless `backlog` says otherwise.
  let handedSincePoke = false;

  async function deliver(effect: Effect, claimedAt: number, job?: Job): Promise<void> {
    const attempted = await traceDelivery(effect, definitions.get(effect.name), () =>
      deliverOnce(effect, claimedAt, job),
    );
    options.onAttempt?.(attempted);
  }

  async function deliverOnce(
    effect: Effect,
    claimedAt: number,
    job: Job | undefined,
  ): Promise<DeliveryAttempt> {
    const started = clock.now();
    const lease = holdEffectLease({ store, clock, effect, claimedAt, leaseMs });
    let failure: DeliveryError | null = null;
    const loaded: { job?: Job } = {};
    try {
      await attempt(effect, lease, loaded, job);
    } catch (error) {
      const cause = error instanceof DeliveryError ? error : new DeliveryError(toError(error).message);
      failure = new DeliveryError(redactUrlsIn(cause.message, effectUrls), cause.retryAfterMs);
    }
    const claimedUntil = await lease.release();
    const at = clock.now();
    let outcome: DeliveryAttempt["outcome"];
    if (claimedUntil === null) {
      // Another dispatcher holds the row now; whatever it records stands.
      outcome = "lost-claim";
    } else if (failure === null) {
      outcome = (await store.finishEffect({ id: effect.id, claimedUntil, kind: "delivered", at }))
        ? "delivered"
        : "lost-claim";
    } else {
      const decision = effectRetryDecision(
        effect.attempts,
        at - effect.createdAt,
        retry,
        random,
        failure.retryAfterMs,
      );
      const finish =
        decision.kind === "dead"
          ? { id: effect.id, claimedUntil, kind: "dead" as const, at, error: failure.message }
          : {
              id: effect.id,
              claimedUntil,
              kind: "retry" as const,
              at,
              nextAttemptAt: at + decision.delayMs,
              error: failure.message,
            };
      outcome = (await store.finishEffect(finish)) ? decision.kind : "lost-claim";
    }
    const definition = definitions.get(effect.name);
    // Written out, with every key in one literal: properties after a spread each cost V8 a call
    // into its runtime and a new hidden class (~1 µs a delivery for each such literal).
    const attempted: DeliveryAttempt = {
      effect,
      destination: definition ? destinationOf(definition) : null,
      outcome,
      durationMs: at - started,
    };
    if (loaded.job !== undefined) attempted.job = loaded.job;
    if (failure !== null) attempted.error = failure.message;
    return attempted;
  }

  /**
   * One attempt, stopped when its lease is lost or about to run out, or its delivery times out.
   * `committed`: the job as the transaction that handed the effect over committed it, or undefined.
   */
  async function attempt(
    effect: Effect,
    lease: HeldLease,
    loaded: { job?: Job },
    committed: Job | undefined,
  ): Promise<void> {
    // The attempt's span, to deliver in once the job is loaded (see tracing.ts).
    const traced = captureContext();
    const definition = definitions.get(effect.name);
    if (definition === undefined) throw new DeliveryError(`no effect named "${effect.name}" is configured`);
    // A starved store can take long to answer: the lease counts that time too.
    const handler = definition.handler;
    // A handler gets a job of its own, as a read would give it: the committed one is shared with
    // the ingest's caller and the job's other effects.
    const delivery =
      committed === undefined
        ? await lease.race(deliveryOf(effect))
        : jobDelivery(effect, handler ? structuredClone(committed) : committed);
    loaded.job = delivery.job;
    // Through a promise: a plain function from JavaScript (returning nothing) counts as delivered.
    if (handler) {
      const signal = lease.within(timeoutMs);
      return lease.race(Promise.resolve().then(() => resumeIn(traced, () => handler(delivery, signal))));
    }
    const destination = destinationOf(definition);
    const target = destination === null || destination === "handler" ? undefined : targets[destination];
    if (target === undefined)
      throw new DeliveryError(
        destination === null
          ? `effect "${effect.name}" has no deliverable target`
          : `effect "${effect.name}" goes to ${destination}, and this host has no ${destination} target`,
      );
    // A target that can be stopped without an AbortSignal is (none is made for it, see DeliveryStop).
    const { deliverWithStop } = target;
    if (deliverWithStop !== undefined) {
      const stop = lease.stopAfter(timeoutMs);
      return lease.race(resumeIn(traced, () => deliverWithStop.call(target, definition, delivery, stop)));
    }
    const signal = lease.within(timeoutMs);
    return lease.race(resumeIn(traced, () => target.deliver(definition, delivery, signal)));
  }

  /** The delivery of an outbox row: its job, or for an orphaned intent's alert, the intent. */
  async function deliveryOf(effect: Effect): Promise<EffectDelivery> {
    if (effect.trigger === "orphaned") {
      const intent = await store.getIntent(effect.jobId);
      if (intent === null) throw new DeliveryError(`intent ${effect.jobId} no longer exists`);
      return {
        effect: effect.name,
        idempotencyKey: effect.idempotencyKey,
        attempt: effect.attempts,
        type: "intent.orphaned",
        job: intentAlertSubject(intent),
        intent,
      };
    }
    const job = await store.getJob({ provider: effect.provider, id: effect.jobId });
    if (job === null) throw new DeliveryError(`job ${effect.provider}/${effect.jobId} no longer exists`);
    return jobDelivery(effect, job);
  }

  function jobDelivery(effect: Effect, job: Job): EffectDelivery {
    return {
      effect: effect.name,
      idempotencyKey: effect.idempotencyKey,
      attempt: effect.attempts,
      type: effect.trigger === "stuck" ? "job.stuck" : "job.settled",
      job,
    };
  }

  const handoff: EffectHandoff = {
    leaseMsForNext() {
      return inFlight.size + handed.length < concurrency ? leaseMs : null;
    },
    enqueuedPending() {
      // The next slot to free claims it.
      backlog = true;
    },
    take(effect, job) {
      if (!running && options.handoff !== true) {
        void giveBack(effect);
        return;
      }
      handed.push(effect);
      handedJobs.push(job);
      handedSincePoke = true;
      if (running) startHanded();
    },
  };
  if (options.handoff === true) engine.takeEffectHandoff(handoff);

  /** Starts handed effects in free slots (at most `budget`); how many it started. */
  function startHanded(budget = Number.POSITIVE_INFINITY): number {
    let started = 0;
    while (handed.length > 0 && inFlight.size < concurrency && started < budget) {
      const effect = handed.shift() as Effect;
      const job = handedJobs.shift();
      // Started only with a whole delivery's timeout of lease left, as a fresh claim has (the lease
      // is longer than the timeout): one that waited longer (a `runOnce` long after the commit, a
      // slow transaction) is left to run out, after which any claim takes the row.
      if (effect.leaseUntil === null || effect.leaseUntil - clock.now() <= timeoutMs) continue;
      track(deliver(effect, effect.createdAt, job));
      started++;
    }
    return started;
  }

  /**
   * An effect handed over after this dispatcher stopped (its transaction committed meanwhile):
   * made pending again, due now, so that the next dispatcher need not wait for its lease to run out.
   */
  async function giveBack(effect: Effect): Promise<void> {
    if (effect.leaseUntil === null) return;
    const at = clock.now();
    const error = "the dispatcher that claimed it stopped before its first attempt";
    await store
      .finishEffect({
        id: effect.id,
        claimedUntil: effect.leaseUntil,
        kind: "retry",
        at,
        nextAttemptAt: at,
        error,
      })
      .catch(() => {
        // The store is closing: the lease runs out and any dispatcher claims the row then.
      });
  }

  async function pump(budget = Number.POSITIVE_INFINITY): Promise<number> {
    if (pumping) {
      again = true;
      return 0;
    }
    pumping = true;
    let claimed = 0;
    try {
      do {
        again = false;
        claimed += startHanded(budget - claimed);
        const free = Math.min(concurrency - inFlight.size, budget - claimed);
        if (free <= 0) {
          backlog = true;
          break;
        }
        const claimedAt = clock.now();
        const effects = await store.claimEffects(claimedAt, free, leaseMs);
        claimed += effects.length;
        for (const effect of effects) track(deliver(effect, claimedAt));
        backlog = effects.length === free;
        if (backlog) again = true;
      } while (again);
    } finally {
      pumping = false;
    }
    return claimed;
  }

  function track(delivery: Promise<void>): void {
    const tracked = delivery
      .catch(() => {
        // finishEffect failed (store closing or unavailable): the lease brings the row back.
      })
      .finally(() => {
        inFlight.delete(tracked);
        if (running && startHanded(1) === 0 && backlog) void pump().catch(() => {});
      });
    inFlight.add(tracked);
  }

  // A failed pump (the store unavailable) is tried again at the next tick; nothing to report.
  const ticks = createIntervalLoop(
    async () => {
      await pump();
    },
    pollIntervalMs,
    undefined,
    { immediate: true },
  );

  return {
    start() {
      if (running) return;
      running = true;
      if (options.handoff !== false) engine.takeEffectHandoff(handoff);
      ticks.start();
    },
    async stop() {
      running = false;
      if (options.handoff !== true) engine.dropEffectHandoff(handoff);
      await ticks.stop();
      // What was handed over is claimed by this dispatcher: delivered before it stops.
      for (;;) {
        startHanded();
        if (!pumping && inFlight.size === 0 && handed.length === 0) return;
        await Promise.race([...inFlight, yieldToEventLoop()]);
      }
    },
    poke() {
      const handedOnly = handedSincePoke && !backlog;
      handedSincePoke = false;
      if (running && !handedOnly) void pump().catch(() => {});
    },
    async runOnce(options = {}) {
      // A window of `concurrency` slots, each refilled as its delivery ends, until nothing is due
      // (or `limit` is claimed). Run in batches, the run waited for a batch's slowest delivery
      // before it claimed again, and on Workers (where the object's next alarm cannot start while
      // this one runs) every effect enqueued meanwhile waited up to `timeoutMs` behind it. Effects
      // enqueued while the run lasts wake it too. A failed delivery is not due again at once (its
      // retry waits at least the first step of the schedule), so this ends.
      const limit = options.limit ?? Number.POSITIVE_INFINITY;
      let total = 0;
      let wake = () => {};
      const unsubscribe = finality.onEffectsEnqueued(() => wake());
      try {
        for (;;) {
          const woken = new Promise<void>((resolve) => {
            wake = resolve;
          });
          const free = Math.min(concurrency - inFlight.size, limit - total);
          const claimed = free > 0 ? await pump(free) : 0;
          total += claimed;
          if (inFlight.size === 0 && (claimed < free || total >= limit)) return total;
          await Promise.race([...inFlight, ...(total < limit ? [woken] : [])]);
        }
      } finally {
        unsubscribe();
      }
    },
  };
}
