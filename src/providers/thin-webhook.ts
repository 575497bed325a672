import { FinalityError } from "../core/errors.js";
import type { Job, Observation } from "../core/model.js";
import { type CanonicalState, isTerminal } from "../core/states.js";
import type { PollResult } from "../engine/poller.js";
import type { WebhookParseContext } from "../webhooks/receiver-types.js";

/** What one provider object is: its id (the job's id) and, where the id cannot tell, its kind. */
interface ObjectRef {
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
  /**
   * Whether the type says the object has ended, even where it is not trusted to settle the job
   * (an unsigned body) or does not say how (Anthropic's `session.status_terminated`): a fetch
   * that sees it still open is the provider lagging behind its own event. Defaults to whether
   * `state` is terminal.
   */
  announcesTerminal?: boolean | undefined;
  updateTime?: number | undefined;
  result?: unknown;
  error?: unknown;
}

/** What a provider's table says of one webhook type: the object's kind, its state, and whether to fetch it. */
export interface EventMeaning<Kind extends string> {
  kind: Kind;
  state: CanonicalState;
  /** Fetch the object for its result or error; the others carry what is needed (or nothing is). */
  fetch: boolean;
}

/** A thin event whose type is looked up in such a table; a type not there keeps its own name as the state. */
export function thinEventOf(
  id: string,
  type: string,
  meaning: EventMeaning<string> | undefined,
  updateTime: number | undefined,
): ThinEvent {
  return {
    id,
    kind: meaning?.kind ?? null,
    type,
    state: meaning?.state ?? null,
    fetch: meaning?.fetch ?? false,
    updateTime,
  };
}

/**
 * "Notify, then fetch": a thin webhook (OpenAI, Gemini, Anthropic) names an event and an object.
 * When the type settles the state and nothing more is needed, the type is the observation; else
 * the object is fetched from the status API (never from a URL in the body) and is the observation,
 * delivered under the webhook's id so that a redelivery is still a duplicate.
 *
 * A fetch that fails is thrown as retryable: the sender gets a 5xx and retries, and nothing was
 * recorded. So is a fetch that sees the provider lagging behind its own event: the type announced
 * a terminal state and the object is not terminal yet, or the object is not found (404) yet.
 * Recording that answer would use up the delivery id with the older state (the redelivery would be
 * a duplicate and the announced completion gone), and settling on the type alone would settle the
 * job empty for good; the sender's retry, a little later, finds the object as the event says.
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
  const announcesTerminal = event.announcesTerminal ?? (event.state !== null && isTerminal(event.state));
  switch (fetched.kind) {
    case "observed":
      if (announcesTerminal && !isTerminal(fetched.observation.state)) {
        const seen = fetched.observation.rawState ?? fetched.observation.state;
        throw providerLag(provider, event, `the object is still ${seen}`);
      }
      return { ...fetched.observation, source: "webhook", deliveryId };
    case "not-found":
      throw providerLag(provider, event, "the object is not found yet");
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

/** How long a sender is asked to wait before it retries an event the provider has not caught up with. */
const PROVIDER_LAG_RETRY_MS = 30_000;

function providerLag(provider: string, event: ThinEvent, what: string): FinalityError {
  return new FinalityError(
    "internal",
    `${provider}: a ${event.type} webhook for ${event.id}, but ${what} (the provider lags behind its event); retry later`,
    { details: { reason: "provider-lag", provider, id: event.id }, retryAfterMs: PROVIDER_LAG_RETRY_MS },
  );
}
