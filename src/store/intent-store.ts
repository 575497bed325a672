import type { Intent } from "../core/intent-model.js";

/**
 * The intents part of the store port: submission intents (written before the application calls
 * its provider) and the discovery sweep's cursor per provider instance. `Store` and `StoreTx`
 * extend these; every adapter implements them with the same semantics.
 */

export interface IntentQuery {
  status?: "open" | "attached" | "orphaned" | undefined;
  provider?: string | undefined;
  limit?: number | undefined;
}

export interface IntentReads {
  getIntent(key: string): Promise<Intent | null>;
  /** Newest first (by creation), at most `limit` (default 50). */
  listIntents(query: IntentQuery): Promise<Intent[]>;
  /** Flagged orphaned and still without a remote id, for the gauge. */
  countOrphanedIntents(): Promise<number>;
  /** The stored `resume` of a provider instance's sweep; null when none was stored yet. */
  getDiscoveryCursor(provider: string): Promise<string | null>;
}

export interface IntentStoreTx {
  /** The intent, locked for this transaction where the database locks rows. */
  getIntent(key: string): Promise<Intent | null>;
  /** Inserts; false when an intent with this key exists already (a race: re-run or compare). */
  insertIntent(intent: Intent): Promise<boolean>;
  /**
   * Writes the attachment or the orphan flag if the stored intent still has `expected`'s job id
   * and orphan flag (compare-and-set); false otherwise.
   */
  updateIntent(intent: Intent, expected: Intent): Promise<boolean>;
  /** The intent attached to this job, if any. */
  intentForJob(provider: string, jobId: string): Promise<Intent | null>;
  /** Open intents past their deadline (`deadlineAt <= now`), oldest deadline first. */
  overdueIntents(now: number, limit: number): Promise<Intent[]>;
  setDiscoveryCursor(provider: string, resume: string | null, now: number): Promise<void>;
}
