import { isoOrNull } from "./iso-time.js";
/**
 * A submission intent: what the application is about to submit to a provider, recorded under its
 * own key before the call, so that a crash between "the provider accepted it" and "Finality knows
 * the remote id" cannot lose the job.
 *
 * | status   | job id | orphaned at | how it got there                                   |
 * |----------|--------|-------------|----------------------------------------------------|
 * | open     | none   | none        | recorded; the provider call is (maybe) in flight   |
 * | orphaned | none   | set         | still no remote id after the provider's timeout    |
 * | attached | set    | either      | attached by the application, or matched by a sweep |
 *
 * An orphaned intent may still be attached (late attach, or a discovery sweep finds its tag);
 * `orphanedAt` then stays as the record of the alert that went out.
 */
export const INTENT_STATUSES = ["open", "attached", "orphaned"] as const;
export type IntentStatus = (typeof INTENT_STATUSES)[number];

/** Who attached the remote id. */
export const ATTACHED_BY = ["api", "library", "discovery"] as const;
export type AttachedBy = (typeof ATTACHED_BY)[number];

export interface Intent {
  key: string;
  provider: string;
  kind: string | null;
  metadata: unknown;
  /** Passed to the provider where it takes one (a retried submission then makes no second job). */
  idempotencyKey: string;
  createdAt: number;
  /** `createdAt` + the provider's intent timeout: open past it, the intent is orphaned. */
  deadlineAt: number;
  jobId: string | null;
  attachedAt: number | null;
  attachedBy: AttachedBy | null;
  orphanedAt: number | null;
}

export function intentStatus(intent: Intent): IntentStatus {
  if (intent.jobId !== null) return "attached";
  return intent.orphanedAt !== null ? "orphaned" : "open";
}

/**
 * The tag the provider is asked to carry so that a listed job can be matched back to its intent.
 * The key itself: listers read it back from the field their provider keeps.
 */
export function intentTag(intent: Pick<Intent, "key">): string {
  return intent.key;
}

/** The public JSON shape of an intent (API answers, the orphaned alert's payload): ISO-8601 times. */
export function intentToJson(intent: Intent) {
  return {
    key: intent.key,
    provider: intent.provider,
    status: intentStatus(intent),
    ...(intent.jobId !== null ? { jobId: intent.jobId } : {}),
    kind: intent.kind,
    metadata: intent.metadata,
    tag: intentTag(intent),
    idempotencyKey: intent.idempotencyKey,
    createdAt: isoOrNull(intent.createdAt),
    deadlineAt: isoOrNull(intent.deadlineAt),
    attachedAt: isoOrNull(intent.attachedAt),
    attachedBy: intent.attachedBy,
    orphanedAt: isoOrNull(intent.orphanedAt),
  };
}
