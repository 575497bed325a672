import { FinalityError } from "../core/errors.js";
import type { Job, Observation } from "../core/model.js";
import type { PollResult } from "../engine/poller.js";
import type { WebhookParseContext } from "../webhooks/webhook-receiver.js";

/** What one provider object is: its id (the job's id) and, where the id cannot tell, its kind. */
export interface ObjectRef {
  id: string;
  kind: string | null;
  /** The ledger's record, when the adapter needs it (e.g. to anchor an Anthropic session's run). */
  job: Job | null;
}

/** Fetches one object from the provider's status API and reads it as an observation. */
export type ObserveObject = (ref: ObjectRef, signal: AbortSignal) => Promise<PollResult>;

/** How an adapter reads one thin event (type + id): what it says plainly, and whether to fetch. */
export interface ThinEvent {
  id: string;
  kind: string | null;
  /** The event type, kept as the observation's raw state when no fetch is made. */
  type: string;
  /** The canonical state the type states plainly, or null when only the object can tell. */
  state: string | null;
  /** True when the object is needed: for its result, its error, or because the type does not settle it. */
  fetch: boolean;
  updateTime?: number | undefined;
  result?: unknown;
  error?: unknown;
}

/**
 * "Notify, then fetch": a thin webhook (OpenAI, Gemini, Anthropic) names an event and an object.
 * When the type settles the state and nothing more is needed, the type is the observation; else
 * the object is fetched from the status API (never from a URL in the body) and is the observation,
 * delivered under the webhook's id so that a redelivery is still a duplicate.
 *
 * A fetch that fails is thrown as retryable: the sender gets a 5xx and retries, and nothing was
 * recorded. A 404 falls back to the type (if it settles the state) without a result; otherwise
 * the event is recorded as an unknown state.
 */
export async function observeThinEvent(
  provider: string,
  event: ThinEvent,
  deliveryId: string,
  fetchObject: (signal: AbortSignal) => Promise<PollResult>,
  fetchTimeoutMs: number,
  context?: WebhookParseContext,
): Promise<Observation> {
  const fromType: Observation = {
    provider,
    id: event.id,
    state: event.state ?? event.type,
    rawState: event.type,
    source: "webhook",
    deliveryId,
    ...(event.kind === null ? {} : { kind: event.kind }),
    ...(event.updateTime === undefined ? {} : { updateTime: event.updateTime }),
    ...(event.result === undefined ? {} : { result: event.result }),
    ...(event.error === undefined ? {} : { error: event.error }),
  };
  if (!event.fetch) return fromType;
  // A redelivery is a duplicate whatever the object says now: no call on the provider's quota
  // (which might refuse it, and the sender would retry what is already stored).
  if ((await context?.deliveryRecorded?.(provider, deliveryId)) === true) return fromType;
  const fetched = await fetchObject(AbortSignal.timeout(fetchTimeoutMs));
  switch (fetched.kind) {
    case "observed":
      return { ...fetched.observation, source: "webhook", deliveryId };
    case "not-found":
      return {
        ...fromType,
        error: { fetched: "not-found", ...(fromType.error ? { event: fromType.error } : {}) },
      };
    case "failed":
      throw new FinalityError(
        "internal",
        `${provider}: could not fetch ${event.id} after a ${event.type} webhook (${fetched.error}); retry later`,
        {
          details: { reason: "provider-fetch-failed", provider, id: event.id },
          ...(fetched.retryAfterMs === undefined ? {} : { retryAfterMs: fetched.retryAfterMs }),
        },
      );
  }
}
