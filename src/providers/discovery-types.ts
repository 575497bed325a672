/**
 * Discovery: how a provider's list API is read, so that jobs Finality was never told about (the
 * application crashed before registering them, and their webhooks were lost) are still found.
 * Each adapter with a list endpoint supplies a `JobLister`; the discovery sweep (engine) owns the
 * cursor, the budget and the adoption of what it finds. A lister only speaks its provider's
 * protocol: one page per call, nothing stored.
 */

/** One job a provider's list API showed. */
export interface ListedJob {
  /** The remote id, exactly as registration and the status poller use it. */
  id: string;
  /** Finality's kind for it (`batch`, `operation`, `session`, `prediction`, …), when the list says. */
  kind?: string | undefined;
  /** Epoch milliseconds of its creation at the provider. */
  createdAt: number;
  /**
   * The tag the submitter asked the provider to carry: the intent key, read back from the field
   * that provider keeps (OpenAI batch `metadata`, Replicate's webhook URL query, Gemini's
   * `displayName`, Anthropic's `custom_id`s, the generic `tag`). Absent when the job carries none.
   */
  tag?: string | undefined;
  /**
   * The job's state as the list shows it (canonical, mapped by the lister), when the list says:
   * an adopted job then starts there (a settled one settles at once, with its effects) instead of
   * waiting for its first reconcile poll. Absent: adopted `pending`, and the reconciler settles it.
   */
  state?: string | undefined;
  /** The provider's own state name, for the audit trail. */
  rawState?: string | undefined;
  seq?: number | undefined;
  /** Epoch milliseconds of the provider's last update, when the list says. */
  updateTime?: number | undefined;
}

/** What one list call answered. */
export type ListResult =
  | {
      kind: "page";
      jobs: ListedJob[];
      /**
       * Opaque lister state to pass to the next call. The sweep stores it after every page (a
       * restart resumes there) and keeps the last one between sweeps, so the next sweep costs
       * only what is new. Listers encode in it whatever their API needs (a page token, the
       * newest `createdAt` already seen, …).
       */
      resume: string | null;
      /** True when this page reached the end of what is new: the sweep stops here. */
      done: boolean;
    }
  /** 429, 5xx, network: the sweep stops for now and waits at least `retryAfterMs` if given. */
  | { kind: "failed"; error: string; status?: number | undefined; retryAfterMs?: number | undefined };

export interface ListQuery {
  /** The `resume` of the previous page or sweep; null on the very first call. */
  resume: string | null;
  /** Only jobs created at or after this instant matter (`discover.lookbackHours`). */
  sinceMs: number;
}

/** Reads one page of a provider's list API. */
export interface JobLister {
  /** The kinds this list covers; the rest need submission intents. */
  kinds: readonly string[];
  list(query: ListQuery, signal: AbortSignal): Promise<ListResult>;
}
