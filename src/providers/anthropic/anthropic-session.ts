import { isCanonicalState } from "../../core/states.js";
import { boundedResult } from "../bounded-result.js";
import { fromRfc3339, objectOf, textOf } from "../json-fields.js";
import { mapState } from "../state-map.js";
import { ANTHROPIC_SESSION_STATES, ANTHROPIC_STOP_REASONS } from "./anthropic-states.js";

/** What one look at a session says about the run a job tracks (see anthropic-states.ts). */
interface SessionReading {
  state: string;
  rawState: string;
  updateTime?: number | undefined;
  result?: unknown;
  error?: unknown;
}

/**
 * Decides a session run. Pure. `idleEvent` is the session's latest `session.status_idle` event
 * (null when there is none); `anchorMs` is when the run began, if known: an idle event from
 * before it ended an earlier run and says nothing about this one.
 */
export function readSession(
  session: Record<string, unknown>,
  idleEvent: Record<string, unknown> | null,
  anchorMs: number | null,
): SessionReading {
  const status = textOf(session.status) ?? "(no status)";
  const updatedAt = fromRfc3339(session.updated_at);
  const processedAt = fromRfc3339(idleEvent?.processed_at);
  const ended =
    idleEvent !== null && (anchorMs === null || (processedAt ?? 0) >= anchorMs) ? idleEvent : null;
  const stopReason = textOf(objectOf(ended?.stop_reason).type);
  const summary = sessionSummary(session, ended);

  if (status === "idle" || (status === "terminated" && stopReason === "end_turn")) {
    if (ended === null || stopReason === undefined)
      return { state: "pending", rawState: `${status}:no-run`, updateTime: updatedAt };
    const rawState = `${status}:${stopReason}`;
    const state = mapState(ANTHROPIC_STOP_REASONS, stopReason);
    const reading: SessionReading = {
      state: status === "idle" ? state : "succeeded",
      rawState,
      updateTime: processedAt ?? updatedAt,
    };
    if (!isCanonicalState(state)) return { ...reading, state: rawState };
    if (stopReason === "requires_action")
      return { ...reading, result: { ...summary, waitingForInput: true } };
    if (stopReason === "budget_reached")
      return { ...reading, result: { ...summary, paused: "budget_reached" } };
    if (state === "failed")
      return {
        ...reading,
        result: summary,
        error: { stop_reason: ended.stop_reason, stop_details: ended.stop_details ?? null },
      };
    return { ...reading, result: summary };
  }
  if (status === "terminated") {
    const archived = session.archived_at !== null && session.archived_at !== undefined;
    return {
      state: archived ? "cancelled" : "failed",
      rawState: archived ? "terminated:archived" : "terminated",
      updateTime: updatedAt,
      result: summary,
      ...(archived ? {} : { error: { status: "terminated", stop_reason: ended?.stop_reason ?? null } }),
    };
  }
  // Running again clears a "waiting for input" flag left on the result by an earlier look.
  const state = mapState(ANTHROPIC_SESSION_STATES, status);
  return {
    state,
    rawState: status,
    updateTime: updatedAt,
    ...(isCanonicalState(state) ? { result: null } : {}),
  };
}

function sessionSummary(session: Record<string, unknown>, idleEvent: Record<string, unknown> | null) {
  const full = {
    session: {
      id: session.id,
      status: session.status,
      title: session.title ?? null,
      usage: session.usage ?? null,
      stats: session.stats ?? null,
    },
    stopReason: idleEvent?.stop_reason ?? null,
    idleEventId: idleEvent?.id ?? null,
    idledAt: idleEvent?.processed_at ?? null,
  };
  return boundedResult(full, () => ({ ...full, session: { id: session.id, status: session.status } }));
}
