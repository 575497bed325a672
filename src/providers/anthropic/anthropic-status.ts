import type { Job, Observation } from "../../core/model.js";
import { fromRfc3339, latest, objectOf, textOf } from "../json-fields.js";
import { mapState, polledObservation } from "../state-map.js";
import { observedIfSame, type StatusClient } from "../status-client.js";
import type { ObserveObject } from "../thin-webhook.js";
import { readSession } from "./anthropic-session.js";
import { ANTHROPIC_BATCH_STATES, anthropicKindOf } from "./anthropic-states.js";

/** How far before registration a run may have begun (clock skew, registering after starting it). */
const ANCHOR_SLACK_MS = 60_000;

/**
 * Reads a message batch (`GET /v1/messages/batches/{id}`) or a Managed Agents session
 * (`GET /v1/sessions/{id}`, then its latest idle event when it is idle or terminated:
 * `GET /v1/sessions/{id}/events?order=desc&types[]=session.status_idle&limit=1`).
 */
export function createAnthropicObserver(
  provider: string,
  client: StatusClient,
  sessionsBeta: string,
): ObserveObject {
  const beta = { "anthropic-beta": sessionsBeta };
  return async (ref, signal) => {
    const kind = anthropicKindOf(ref.id, ref.kind);
    if (kind === null)
      return {
        kind: "failed",
        error: `cannot tell whether "${ref.id}" is a message batch or a session: set its kind`,
      };
    const id = encodeURIComponent(ref.id);
    if (kind === "message_batch") {
      const answer = await client.get(`/v1/messages/batches/${id}`, signal);
      if (answer.kind !== "answer") return answer;
      const batch = objectOf(answer.body);
      return observedIfSame(ref.id, batch.id, () => batchObservation(provider, batch));
    }
    const answer = await client.get(`/v1/sessions/${id}`, signal, undefined, beta);
    if (answer.kind !== "answer") return answer;
    const session = objectOf(answer.body);
    let idleEvent: Record<string, unknown> | null = null;
    if (session.status === "idle" || session.status === "terminated") {
      const query = "order=desc&types%5B%5D=session.status_idle&limit=1";
      const events = await client.get(`/v1/sessions/${id}/events`, signal, query, beta);
      if (events.kind === "not-found")
        return { kind: "failed", error: "the session's events were not found" };
      if (events.kind !== "answer") return events;
      const data = objectOf(events.body).data;
      idleEvent = Array.isArray(data) && data.length > 0 ? objectOf(data[0]) : null;
    }
    return observedIfSame(ref.id, session.id, () =>
      sessionObservation(provider, session, idleEvent, runAnchor(ref.job)),
    );
  };
}

/** `ended` is refined: cancelled if a cancel was initiated, expired if every request expired. */
function batchObservation(provider: string, batch: Record<string, unknown>): Observation {
  const raw = textOf(batch.processing_status) ?? "(no status)";
  let state = mapState(ANTHROPIC_BATCH_STATES, raw);
  const counts = objectOf(batch.request_counts);
  if (raw === "ended") {
    const expired = Number(counts.expired ?? 0);
    const others = ["succeeded", "errored", "canceled"].reduce(
      (sum, key) => sum + Number(counts[key] ?? 0),
      0,
    );
    if (textOf(batch.cancel_initiated_at)) state = "cancelled";
    else if (expired > 0 && others === 0) state = "expired";
  }
  const updateTime = latest(
    fromRfc3339(batch.created_at),
    fromRfc3339(batch.cancel_initiated_at),
    fromRfc3339(batch.ended_at),
  );
  const observation = polledObservation(provider, batch.id, state, raw, "message_batch", updateTime);
  if (raw !== "ended") return observation;
  // results_url is kept for the application; Finality never fetches a URL it was given.
  observation.result = {
    id: batch.id,
    processing_status: raw,
    request_counts: batch.request_counts ?? null,
    results_url: batch.results_url ?? null,
    ended_at: batch.ended_at ?? null,
    cancel_initiated_at: batch.cancel_initiated_at ?? null,
  };
  return observation;
}

function sessionObservation(
  provider: string,
  session: Record<string, unknown>,
  idleEvent: Record<string, unknown> | null,
  anchorMs: number | null,
): Observation {
  const reading = readSession(session, idleEvent, anchorMs);
  return {
    provider,
    id: String(session.id),
    source: "reconcile",
    kind: "session",
    ...withoutUndefined(reading),
  };
}

/**
 * When the job's run began: `metadata.runStartedAt` (RFC 3339 or epoch ms) when the application
 * gives it, else a minute before the job was registered; none for a job not yet in the ledger.
 */
function runAnchor(job: Job | null): number | null {
  if (job === null) return null;
  const given = objectOf(job.metadata).runStartedAt;
  if (typeof given === "number" && Number.isFinite(given)) return given;
  const parsed = fromRfc3339(given);
  if (parsed !== undefined) return parsed;
  return job.registered ? job.submittedAt - ANCHOR_SLACK_MS : null;
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}
