/**
 * Real-shaped Anthropic objects. Field names follow anthropic-sdk-typescript
 * src/resources/messages/batches.ts (`MessageBatch`), src/resources/beta/sessions/sessions.ts
 * (`BetaManagedAgentsSession`), src/resources/beta/sessions/events.ts (`session.status_idle`) and
 * src/resources/beta/webhooks.ts (`BetaWebhookEvent`); see docs/providers-research.md §3.
 */

export const BATCH_STATUSES = ["in_progress", "canceling", "ended"] as const;
export const SESSION_STATUSES = ["rescheduling", "running", "idle", "terminated"] as const;
export const STOP_REASONS = [
  "end_turn",
  "requires_action",
  "retries_exhausted",
  "budget_reached",
  "refusal",
] as const;

type Counts = { processing: number; succeeded: number; errored: number; canceled: number; expired: number };

export function messageBatch(
  id: string,
  status: string,
  options: { counts?: Partial<Counts>; cancelled?: boolean } = {},
): Record<string, unknown> {
  const ended = status === "ended";
  const counts: Counts = ended
    ? { processing: 0, succeeded: 95, errored: 3, canceled: 0, expired: 2, ...options.counts }
    : { processing: 100, succeeded: 0, errored: 0, canceled: 0, expired: 0, ...options.counts };
  return {
    id,
    type: "message_batch",
    processing_status: status,
    request_counts: counts,
    created_at: "2026-11-01T10:00:00Z",
    expires_at: "2026-11-02T10:00:00Z",
    ended_at: ended ? "2026-11-01T10:42:00Z" : null,
    cancel_initiated_at: options.cancelled || status === "canceling" ? "2026-11-01T10:30:00Z" : null,
    archived_at: null,
    results_url: ended ? `https://api.anthropic.com/v1/messages/batches/${id}/results` : null,
  };
}

export function session(
  id: string,
  status: string,
  options: { updatedAt?: string; archived?: boolean } = {},
): Record<string, unknown> {
  return {
    id,
    type: "session",
    status,
    created_at: "2026-11-01T10:00:00Z",
    updated_at: options.updatedAt ?? "2026-11-01T10:05:00Z",
    archived_at: options.archived ? "2026-11-01T10:06:00Z" : null,
    agent: { id: "agent_011CZkYpogX7uDKUyvBTophP", type: "agent", version: 1 },
    environment_id: "env_011CZkZ9X2dpNyB7HsEFoRfW",
    metadata: {},
    resources: [],
    stats: { active_seconds: 12.5, duration_seconds: 300 },
    title: "Fix the flaky test",
    usage: { input_tokens: 1200, output_tokens: 340 },
    vault_ids: [],
  };
}

/** A `session.status_idle` stream event, as `GET /v1/sessions/{id}/events` lists it. */
export function idleEvent(reason: string, processedAt = "2026-11-01T10:04:59.197Z"): Record<string, unknown> {
  return {
    id: `sevt_${reason}_${processedAt.replace(/\D/g, "")}`,
    type: "session.status_idle",
    processed_at: processedAt,
    stop_reason:
      reason === "requires_action" ? { type: reason, event_ids: ["sevt_011CZkZtool"] } : { type: reason },
    stop_details: reason === "refusal" ? { type: "refusal", category: "cyber" } : null,
  };
}

/** A webhook body: top-level `type` is always "event"; the event's own type is in `data.type`. */
export function anthropicWebhookEvent(type: string, objectId: string): Record<string, unknown> {
  return {
    type: "event",
    id: `wevt_${objectId}_${type.replace(/\W/g, "")}`,
    created_at: new Date().toISOString(),
    data: {
      type,
      id: objectId,
      organization_id: "org_011CZkZZAe0sMna4vkBdtrfx",
      workspace_id: "wrkspc_011CZkZaBF1tNoB5wlCeusgy",
    },
  };
}
