import type { CanonicalState } from "../../core/states.js";
import type { StateTable } from "../state-map.js";

/**
 * Message batch `processing_status`.
 * Source: anthropic-sdk-typescript src/resources/messages/batches.ts (`MessageBatch`);
 * https://docs.anthropic.com/en/api/retrieving-message-batches
 *
 * | processing_status | canonical | note |
 * |-------------------|-----------|------|
 * | in_progress       | running   | |
 * | canceling         | running   | until it has ended |
 * | ended             | see below | per-request outcomes are in `request_counts` |
 *
 * `ended` → succeeded, with `request_counts` and `results_url` on the job's result (requests that
 * errored or expired are the application's to read in the results file); except cancelled when a
 * cancel was initiated (`cancel_initiated_at`), and expired when every request expired.
 */
export const ANTHROPIC_BATCH_STATES: StateTable = {
  in_progress: "running",
  canceling: "running",
  ended: "succeeded",
};

/**
 * Managed Agents session `status`, with the stop reason of its latest `session.status_idle` event.
 * Source: anthropic-sdk-typescript src/resources/beta/sessions/sessions.ts (`status`) and
 * src/resources/beta/sessions/events.ts (`BetaManagedAgentsSessionStatusIdleEvent.stop_reason`);
 * https://platform.claude.com/docs/en/managed-agents/webhooks
 *
 * A job is one run (turn) of a session: a session that finishes its work goes `idle`, not
 * `terminated`, so `idle` is decided by the stop reason of the idle event that ended the run.
 *
 * | status / stop reason     | canonical | note |
 * |--------------------------|-----------|------|
 * | running, rescheduling    | running   | rescheduling: a transient error, retried |
 * | idle, no idle event yet  | pending   | sessions start idle; the run has not begun |
 * | idle + end_turn          | succeeded | |
 * | idle + retries_exhausted | failed    | |
 * | idle + refusal           | failed    | `stop_details.category` is kept |
 * | idle + requires_action   | running   | waiting for input: `result.waitingForInput` |
 * | idle + budget_reached    | running   | paused until the budget is raised: `result.paused` |
 * | terminated               | failed    | cancelled when archived; succeeded when the run had ended with end_turn |
 */
export const ANTHROPIC_SESSION_STATES: StateTable = { running: "running", rescheduling: "running" };

export const ANTHROPIC_STOP_REASONS: StateTable = {
  end_turn: "succeeded",
  retries_exhausted: "failed",
  refusal: "failed",
  requires_action: "running",
  budget_reached: "running",
};

/**
 * Session webhook types (`data.type`; the envelope's own `type` is always "event"). Thin: only the
 * session id. A run start says `running` plainly; the others are decided by fetching the session.
 * Source: anthropic-sdk-typescript src/resources/beta/webhooks.ts (`BetaWebhookEvent`);
 * https://platform.claude.com/docs/en/managed-agents/webhooks (the `session.idled`,
 * `session.requires_action`, `session.running` variants appear only in the SDK's types).
 * Any other type (agent.*, vault.*, session.thread_*, ...) is recorded as an unknown state.
 */
export const ANTHROPIC_WEBHOOK_EVENTS: Readonly<Record<string, CanonicalState | "fetch">> = {
  "session.status_run_started": "running",
  "session.status_rescheduled": "running",
  "session.running": "running",
  "session.status_idled": "fetch",
  "session.idled": "fetch",
  "session.requires_action": "fetch",
  "session.budget_reached": "fetch",
  "session.status_terminated": "fetch",
  "session.archived": "fetch",
};

type AnthropicKind = "message_batch" | "session";

/** The object kind: `msgbatch_` or `sesn_` ids, else the job's `kind` (`message_batch`/`batch`, `session`). */
export function anthropicKindOf(id: string, kind: string | null): AnthropicKind | null {
  if (id.startsWith("msgbatch_")) return "message_batch";
  if (id.startsWith("sesn_")) return "session";
  if (kind === "message_batch" || kind === "batch") return "message_batch";
  if (kind === "session") return "session";
  return null;
}
