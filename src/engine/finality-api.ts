import type { Job, JobEvent, JobKey } from "../core/model.js";
import type { ObservationInput, RegistrationInput } from "../core/validation.js";
import type { Settlement } from "../store/settlement-feed.js";
import type { JobQuery, Page } from "../store/store.js";
import type { IngestOutcome, RegisterOutcome } from "./ingest.js";
import type { IntentApi } from "./intent-api.js";
import type { PruneCounts, PruneOptions, RetentionWindows } from "./retention.js";
import type { FollowOptions } from "./settlement-stream.js";

/**
 * The ledger, as a library user holds it. The engine's own wiring (its store, clock, ingest
 * contexts) is on `FinalityEngine` (finality-engine.ts), which the dispatcher, the reconciler,
 * runs and the HTTP app reach with `engineOf`; nothing here lets a caller write around the reducer.
 */
export interface Finality extends IntentApi {
  /**
   * Feeds one observation through the reducer; resolves after it is committed. Typed for the
   * compiler's check; the value is validated all the same (a caller in JavaScript, or one that
   * casts), and a bad one is refused with `invalid-observation`, changing nothing.
   */
  ingest(observation: ObservationInput): Promise<IngestOutcome>;
  /** Upserts a job without ever changing an existing state (validated as `ingest` is). */
  register(registration: RegistrationInput): Promise<RegisterOutcome>;
  getJob(key: JobKey): Promise<Job | null>;
  listJobs(query?: JobQuery): Promise<Page<Job>>;
  jobEvents(key: JobKey, page?: { limit?: number; after?: number }): Promise<JobEvent[]>;
  /**
   * Every job settlement after `options.after` (a cursor; absent: from the start) in commit
   * order, waiting for new ones once caught up: `for await (const s of finality.settlements())`.
   * Keep `s.cursor` where you record having handled `s`, and pass it back as `after` to resume.
   */
  settlements(options?: FollowOptions): AsyncGenerator<Settlement, void, undefined>;
  /**
   * Resolves with the job once it has settled (at once if it has), woken by the settling commit —
   * on PostgreSQL, a commit on any replica. Rejects with a `FinalityError` `wait-timeout` after
   * `timeoutMs` (60 s), `not-found` for a job the ledger does not know, or the signal's reason when
   * `signal` aborts. Many waits on one job share one read per commit.
   */
  waitFor(key: JobKey, options?: WaitForOptions): Promise<Job>;
  /**
   * Calls `listener` after a commit that enqueued effects: `finality.onEffectsEnqueued(() =>
   * dispatcher.poke())` delivers at once instead of at the dispatcher's next poll. Answers the
   * unsubscribe function.
   */
  onEffectsEnqueued(listener: () => void): () => void;
  /**
   * One retention pass at the ledger's time: deletes what is past its window (`DEFAULT_RETENTION`,
   * with `options.retention` over it) in small batches, as `finality serve` does every 10 minutes.
   */
  prune(options?: PruneOptions & { retention?: Partial<RetentionWindows> }): Promise<PruneCounts>;
  close(): Promise<void>;
}

interface WaitForOptions {
  /** How long to wait for the job to settle, in ms (60,000). */
  timeoutMs?: number;
  signal?: AbortSignal;
}
