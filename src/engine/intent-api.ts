import type { Clock } from "../core/clock.js";
import { FinalityError } from "../core/errors.js";
import type { AttachedBy, Intent } from "../core/intent-model.js";
import { intentTag } from "../core/intent-model.js";
import { attachSchema, parseIntentInput, parseIntentKey, parseWith } from "../core/validation.js";
import type { Store } from "../store/store.js";
import type { EffectDefinition } from "./effect-definitions.js";
import type { IngestContext } from "./ingest.js";
import {
  type AttachOutcome,
  attachIntentInTx,
  DEFAULT_INTENT_TIMEOUT_SECONDS,
  flagOrphanedInTx,
  markIntentAttachedInTx,
  type RecordIntentOutcome,
  recordIntentInTx,
  refuseOtherJob,
} from "./intents.js";

/** What `submit` hands the provider call: the tag to have the provider carry, and the idempotency key. */
export interface SubmitCall {
  key: string;
  tag: string;
  idempotencyKey: string;
}

/** The provider call answers the remote id, as a string or `{ id }`. */
export type SubmitFn = (call: SubmitCall) => Promise<string | { id: string }>;

export interface IntentApi {
  /**
   * Record, call, attach: records the intent (write-ahead), calls the provider with its tag and
   * idempotency key, and attaches the id the call returns. A crash after the call and before the
   * attach leaves an open intent that is flagged orphaned, and that a discovery sweep matches
   * by its tag. An intent attached already is answered without calling the provider again.
   */
  submit(
    input: { provider: string; key: string; kind?: string; metadata?: unknown },
    call: SubmitFn,
  ): Promise<AttachOutcome>;
  recordIntent(input: unknown): Promise<RecordIntentOutcome>;
  attachIntent(key: string, id: string, by?: AttachedBy): Promise<AttachOutcome>;
  getIntent(key: string): Promise<Intent | null>;
  /** Flags the open intents past their deadline (at most `limit`); what `serve` runs on a timer. */
  flagOrphanedIntents(limit?: number): Promise<Intent[]>;
}

interface IntentApiParts {
  store: Store;
  clock: Clock;
  newId: () => string;
  effects: readonly EffectDefinition[];
  contextFor(provider: string, now: number): IngestContext;
  /** The provider's intent timeout in seconds (its own, else the ledger's), or the default. */
  intentTimeoutSeconds(provider: string): number | undefined;
  announceEffects(): void;
  /** Where jobs live when not in this store (a sharded Worker); absent: every job is here. */
  jobPlacement?: IntentJobPlacement | undefined;
}

/**
 * A host whose jobs live in other stores than its intents (the sharded Worker: intents on the runs
 * home, each job on its shard). Attaching then registers the job where it lives, with a copy of
 * the intent (`attachIntentCopyInTx` there), before the intent here is marked attached: a crash
 * between the two leaves the job registered once, on its shard, and the intent open here, which
 * the orphan scan flags and a repeated attach (or a discovery sweep) completes.
 */
export interface IntentJobPlacement {
  /** Attaches `id` to a copy of `intent` where job `id` lives; null when that is this store. */
  attachWhereTheJobLives(intent: Intent, id: string, by: AttachedBy): Promise<AttachOutcome | null>;
}

export function createIntentApi(parts: IntentApiParts): IntentApi {
  const { store, clock } = parts;

  async function recordIntent(input: unknown): Promise<RecordIntentOutcome> {
    const parsed = parseIntentInput(input);
    const now = clock.now();
    // Refuses an unknown provider up front (contextFor throws), as registration does.
    parts.contextFor(parsed.provider, now);
    const timeoutMs = (parts.intentTimeoutSeconds(parsed.provider) ?? DEFAULT_INTENT_TIMEOUT_SECONDS) * 1000;
    return store.transaction((tx) => recordIntentInTx(tx, parsed, { now, timeoutMs, newId: parts.newId }), {
      lockOrder: `intent\u0000${parsed.key}`,
    });
  }

  async function attachIntent(key: string, id: string, by: AttachedBy = "library"): Promise<AttachOutcome> {
    const intentKey = parseIntentKey(key);
    const jobId = parseWith(attachSchema, { id }, "invalid-request").id;
    const intent = await store.getIntent(intentKey);
    if (intent === null)
      throw new FinalityError("not-found", `no intent ${intentKey}`, { details: { key: intentKey } });
    const ctx = parts.contextFor(intent.provider, clock.now());
    if (parts.jobPlacement !== undefined) {
      // Refused before the job is registered anywhere (the mark below checks again).
      refuseOtherJob(intent, jobId);
      const there = await parts.jobPlacement.attachWhereTheJobLives(intent, jobId, by);
      if (there !== null) {
        const marked = await store.transaction(
          (tx) => markIntentAttachedInTx(tx, intentKey, jobId, by, there.intent.attachedAt ?? ctx.now),
          { lockOrder: `intent\u0000${intentKey}` },
        );
        // Its effects are the job's store's to deliver.
        return { ...there, intent: marked };
      }
    }
    return store.transaction(
      async (tx) => {
        const outcome = await attachIntentInTx(tx, intentKey, jobId, by, ctx);
        if (outcome.effects.length > 0) tx.afterCommit(parts.announceEffects);
        return outcome;
      },
      { lockOrder: `${intent.provider}\u0000${jobId}\u0000` },
    );
  }

  return {
    recordIntent,
    attachIntent,
    async getIntent(key) {
      return store.getIntent(parseIntentKey(key));
    },
    async submit(input, call) {
      const { intent } = await recordIntent(input);
      if (intent.jobId !== null) return attachIntent(intent.key, intent.jobId, "library");
      const answer = await call({
        key: intent.key,
        tag: intentTag(intent),
        idempotencyKey: intent.idempotencyKey,
      });
      const id = typeof answer === "string" ? answer : answer?.id;
      if (typeof id !== "string" || id.length === 0) {
        throw new FinalityError(
          "invalid-request",
          `the provider call for intent ${intent.key} returned no id`,
          {
            details: { key: intent.key },
          },
        );
      }
      return attachIntent(intent.key, id, "library");
    },
    async flagOrphanedIntents(limit = 100) {
      const now = clock.now();
      return store.transaction(async (tx) => {
        // Only the ledger's effects and ids are used: no job is observed or scheduled here.
        const ctx: IngestContext = {
          now,
          unknownJobs: "adopt",
          effects: parts.effects,
          newId: parts.newId,
          firstCheckAt: () => null,
        };
        const { flagged, effects } = await flagOrphanedInTx(tx, ctx, limit);
        if (effects.length > 0) tx.afterCommit(parts.announceEffects);
        return flagged;
      });
    },
  };
}
