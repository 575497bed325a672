import { uuidv7 } from "uuidv7";
import { type Clock, systemClock } from "../core/clock.js";
import { FinalityError } from "../core/errors.js";
import type { Observation, UnknownJobPolicy } from "../core/model.js";
import { DEFAULT_MAX_CLOCK_SKEW_MS } from "../core/ordering-time.js";
import { RUNS_PROVIDER } from "../core/run-model.js";
import { parseJobKey, parseObservation, parseRegistration } from "../core/validation.js";
import { jobLockOrder, type Store, type StoreTx } from "../store/store.js";
import type { EffectDefinition } from "./effect-definitions.js";
import type { EffectHandoff } from "./effect-handoff.js";
import type { Finality } from "./finality-api.js";
import { bindEngine } from "./finality-engine.js";
import { type IngestContext, type IngestOutcome, ingestInTx, registerInTx } from "./ingest.js";
import { traceIngest } from "./ingest-tracing.js";
import { createIntentApi, type IntentJobPlacement } from "./intent-api.js";
import { createJobWaiters } from "./job-waiters.js";
import { DEFAULT_RETENTION, pruneOnce } from "./retention.js";
import { followSettlements } from "./settlement-stream.js";
import { currentTraceParent } from "./tracing.js";

// The public interface has its own file, so finality-engine.ts can extend it without importing
// this one (which imports finality-engine.ts: a cycle).
export type { Finality } from "./finality-api.js";

export interface ProviderPolicy {
  unknownJobs?: UnknownJobPolicy;
  /** Seconds after submission before the first reconcile poll; overrides `firstCheckDelaySeconds`. */
  graceSeconds?: number;
  /**
   * False: never scheduled for reconcile checks. The `runs` mirror jobs default to false (nothing
   * to poll); a host that watches them for `stuck` sets true, with `graceSeconds` = stuck after.
   */
  reconcile?: boolean;
  /** Seconds an intent of this provider may stay without a remote id before it is orphaned. */
  intentTimeoutSeconds?: number;
  /**
   * Why this provider's poller could not poll a job of this id and kind (null: it can).
   * Registration refuses such a job with a 400 instead of accepting one no poll will ever reach.
   */
  unpollable?: (id: string, kind: string | null) => string | null;
}

export interface FinalityOptions {
  /** A store, or where to open the embedded SQLite one. */
  store: Store | { sqlite: string; synchronous?: "NORMAL" | "FULL"; cacheMiB?: number };
  /**
   * Known providers and their policies. When given, observations for any other provider are
   * refused with `unknown-provider`; when omitted, every provider is accepted with `adopt`.
   */
  providers?: Record<string, ProviderPolicy>;
  effects?: readonly EffectDefinition[];
  /** Default seconds an intent may stay without a remote id before it is orphaned (900). */
  intentTimeoutSeconds?: number;
  /** Where jobs live when not in this store (the sharded Worker's ledger objects); absent: here. */
  intentJobPlacement?: IntentJobPlacement;
  /** Default grace before an open job's first reconcile poll (90 s). */
  graceSeconds?: number;
  /**
   * How far ahead of its receipt an observation's `updateTime` may be and still order the job
   * (300 s); a time further ahead is cut to the receipt time (`ingest.maxClockSkewSeconds`).
   */
  maxClockSkewSeconds?: number;
  /** The ledger's time. Default: the store's clock where it has one (PostgreSQL: the database's), else the system clock. */
  clock?: Clock;
  newId?: () => string;
}

const DEFAULT_GRACE_SECONDS = 90;
const DEFAULT_WAIT_MS = 60_000;

/**
 * The ledger on a store already open. Portable (no Node module): the Workers entry builds on it;
 * `createFinality` (create-finality.ts) adds opening the embedded SQLite file by path.
 */
export function finalityOn(options: FinalityOptions & { store: Store }): Finality {
  const store = options.store;
  // A store shared by replicas brings the clock they must agree on (see Store.clock).
  const clock = options.clock ?? store.clock ?? systemClock;
  const newId = options.newId ?? uuidv7;
  const effects = options.effects ?? [];
  const providers = options.providers;
  validateEffects(effects);
  const maxClockSkewMs = (options.maxClockSkewSeconds ?? DEFAULT_MAX_CLOCK_SKEW_MS / 1000) * 1000;
  if (!Number.isFinite(maxClockSkewMs) || maxClockSkewMs < 0) {
    throw new FinalityError("invalid-config", "maxClockSkewSeconds must be a number of seconds, 0 or more", {
      details: { maxClockSkewSeconds: options.maxClockSkewSeconds },
    });
  }

  function policyFor(provider: string): ProviderPolicy {
    // Runs on the application's own workers are mirrored as jobs of this reserved provider:
    // always accepted, never polled (the lease sweeper watches their leases); checked only when
    // the host asks, to flag a run that stays open too long as `stuck`.
    if (provider === RUNS_PROVIDER) {
      const runs = providers?.[RUNS_PROVIDER];
      return { ...runs, reconcile: runs?.reconcile === true };
    }
    if (providers === undefined) return {};
    const policy = Object.hasOwn(providers, provider) ? providers[provider] : undefined;
    if (policy === undefined) {
      throw new FinalityError("unknown-provider", `unknown provider "${provider}"`, {
        details: { provider },
      });
    }
    return policy;
  }

  function contextFor(provider: string, now: number): IngestContext {
    const policy = policyFor(provider);
    const graceMs = (policy.graceSeconds ?? options.graceSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
    return {
      now,
      unknownJobs: policy.unknownJobs ?? "adopt",
      effects,
      newId,
      firstCheckAt: (job) => (policy.reconcile === false ? null : job.submittedAt + graceMs),
      traceParent: currentTraceParent(),
      maxClockSkewMs,
      ...(policy.unpollable === undefined ? {} : { unpollable: policy.unpollable }),
      ...(handoff === null ? {} : { handoff }),
    };
  }

  // The dispatcher that takes effects as they commit (the engine's takeEffectHandoff), if one does.
  let handoff: EffectHandoff | null = null;
  const listeners = new Set<() => void>();
  const announceEffects = () => {
    for (const listener of listeners) listener();
  };

  // A write on the ingest path: its outbox rows commit with it, and the listeners (the
  // dispatcher) are woken only once they have.
  function writeJob<T extends { effects: readonly unknown[] }>(
    lockOrder: string,
    write: (tx: StoreTx) => Promise<T>,
  ): Promise<T> {
    return store.transaction(
      async (tx) => {
        const outcome = await write(tx);
        if (outcome.effects.length > 0) tx.afterCommit(announceEffects);
        return outcome;
      },
      { lockOrder },
    );
  }

  async function ingestTrusted(observation: Observation): Promise<IngestOutcome> {
    return traceIngest(observation, () => {
      const ctx = contextFor(observation.provider, clock.now());
      // The transaction holds this ingest alone (writeJob's afterCommit sends no statement).
      return writeJob(jobLockOrder(observation, observation.deliveryId), (tx) =>
        ingestInTx(tx, observation, ctx, { endsTransaction: true }),
      );
    });
  }

  const intents = createIntentApi({
    store,
    clock,
    newId,
    effects,
    contextFor,
    announceEffects,
    intentTimeoutSeconds: (provider) =>
      policyFor(provider).intentTimeoutSeconds ?? options.intentTimeoutSeconds,
    jobPlacement: options.intentJobPlacement,
  });

  const jobWaiters = createJobWaiters(store);
  const finality: Finality = {
    ...intents,
    onEffectsEnqueued(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async ingest(input) {
      return ingestTrusted(refuseRunsProvider(parseObservation(input), "invalid-observation"));
    },
    async register(input) {
      const registration = refuseRunsProvider(parseRegistration(input), "invalid-request");
      const ctx = contextFor(registration.provider, clock.now());
      // A late kind or a parked completion may have enqueued effects. Nothing follows the
      // registration in its transaction: a new job's insert may carry the COMMIT.
      return writeJob(jobLockOrder(registration), (tx) =>
        registerInTx(tx, registration, ctx, "api", { endsTransaction: true }),
      );
    },
    async getJob(key) {
      return store.getJob(parseJobKey(key.provider, key.id));
    },
    async listJobs(query = {}) {
      return store.listJobs(query);
    },
    async jobEvents(key, page) {
      return store.jobEvents(parseJobKey(key.provider, key.id), page);
    },
    settlements: (follow) => followSettlements(store, follow),
    async waitFor(key, { timeoutMs = DEFAULT_WAIT_MS, signal } = {}) {
      const jobKey = parseJobKey(key.provider, key.id);
      if (!Number.isFinite(timeoutMs) || timeoutMs < 0) {
        throw new FinalityError("invalid-request", "timeoutMs must be a number of ms, 0 or more", {
          details: { field: "timeoutMs", timeoutMs },
        });
      }
      signal?.throwIfAborted();
      const { job, settled } = await jobWaiters.waitForSettled(jobKey, { timeoutMs, signal });
      if (job === null) {
        throw new FinalityError("not-found", `no job ${jobKey.provider}/${jobKey.id}`, {
          details: { ...jobKey },
        });
      }
      if (settled) return job;
      signal?.throwIfAborted();
      throw new FinalityError(
        "wait-timeout",
        `job ${jobKey.provider}/${jobKey.id} did not settle within ${timeoutMs} ms (it is ${job.state})`,
        { details: { ...jobKey, state: job.state, timeoutMs } },
      );
    },
    async prune({ retention, ...prune } = {}) {
      return pruneOnce(store, { ...DEFAULT_RETENTION, ...retention }, clock.now(), prune);
    },
    close: () => store.close(),
  };
  bindEngine(finality, {
    ...finality,
    store,
    clock,
    effects,
    contextFor,
    ingestTrusted,
    announceEffects,
    jobWaiters,
    takeEffectHandoff(taker) {
      if (handoff !== null && handoff !== taker) return false;
      handoff = taker;
      return true;
    },
    dropEffectHandoff(taker) {
      if (handoff === taker) handoff = null;
    },
  });
  return finality;
}

/**
 * Jobs of provider `runs` mirror runs on your own workers and change only with their run (leases,
 * callbacks, the runs API): an observation or registration from outside would settle a mirror
 * while its run goes on, and fire its effects.
 */
function refuseRunsProvider<T extends { provider: string }>(
  input: T,
  code: "invalid-observation" | "invalid-request",
): T {
  if (input.provider !== RUNS_PROVIDER) return input;
  throw new FinalityError(
    code,
    `provider "${RUNS_PROVIDER}" is reserved for runs on your own workers: use the runs API (/v1/runs)`,
    { details: { field: "provider", provider: RUNS_PROVIDER } },
  );
}

function validateEffects(effects: readonly EffectDefinition[]): void {
  const names = new Set<string>();
  for (const effect of effects) {
    const targets = [
      effect.handler,
      effect.url,
      effect.nats,
      effect.amqp,
      effect.redis,
      effect.transactional,
    ];
    if (targets.filter((t) => t !== undefined).length !== 1) {
      throw new FinalityError(
        "invalid-config",
        `effect "${effect.name}" needs exactly one of handler, url, nats, amqp, redis, transactional`,
      );
    }
    if (names.has(effect.name))
      throw new FinalityError("invalid-config", `effect "${effect.name}" is defined twice`);
    names.add(effect.name);
  }
}
