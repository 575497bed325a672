import { describe, expect, it } from "vitest";
import type { Observation } from "../../src/core/model.js";
import { reduce } from "../../src/core/reducer.js";
import { CANONICAL_STATES } from "../../src/core/states.js";
import {
  ANTHROPIC_BATCH_STATES,
  ANTHROPIC_STOP_REASONS,
  ANTHROPIC_WEBHOOK_EVENTS,
} from "../../src/providers/anthropic/anthropic-states.js";
import { BEDROCK_JOB_STATES } from "../../src/providers/bedrock/bedrock-states.js";
import { FAL_QUEUE_STATES, FAL_WEBHOOK_STATES } from "../../src/providers/fal/fal-states.js";
import {
  GEMINI_BATCH_STATES,
  GEMINI_INTERACTION_STATES,
  GEMINI_WEBHOOK_EVENTS,
} from "../../src/providers/gemini/gemini-states.js";
import {
  OPENAI_BATCH_STATES,
  OPENAI_RESPONSE_STATES,
  OPENAI_WEBHOOK_EVENTS,
} from "../../src/providers/openai/openai-states.js";
import { REPLICATE_PREDICTION_STATES } from "../../src/providers/replicate/replicate-states.js";
import { mapState, type StateTable } from "../../src/providers/state-map.js";
import { VERTEX_JOB_STATES } from "../../src/providers/vertex/vertex-states.js";

/**
 * Every name each provider documents, with the canonical state this project decided for it
 * (docs/README-providers.md). Written out here rather than read from the adapters' tables, so
 * that a change to a table is a deliberate change to this list too.
 */
const DOCUMENTED: [string, StateTable, Record<string, string>][] = [
  [
    "openai response",
    OPENAI_RESPONSE_STATES,
    {
      queued: "pending",
      in_progress: "running",
      completed: "succeeded",
      failed: "failed",
      cancelled: "cancelled",
      incomplete: "failed",
    },
  ],
  [
    "openai batch",
    OPENAI_BATCH_STATES,
    {
      validating: "pending",
      in_progress: "running",
      finalizing: "running",
      cancelling: "running",
      completed: "succeeded",
      failed: "failed",
      expired: "expired",
      cancelled: "cancelled",
    },
  ],
  [
    "anthropic batch",
    ANTHROPIC_BATCH_STATES,
    { in_progress: "running", canceling: "running", ended: "succeeded" },
  ],
  [
    "anthropic stop reason",
    ANTHROPIC_STOP_REASONS,
    {
      end_turn: "succeeded",
      retries_exhausted: "failed",
      refusal: "failed",
      requires_action: "running",
      budget_reached: "running",
    },
  ],
  [
    "replicate",
    REPLICATE_PREDICTION_STATES,
    {
      starting: "pending",
      processing: "running",
      succeeded: "succeeded",
      failed: "failed",
      canceled: "cancelled",
      aborted: "expired",
    },
  ],
  // COMPLETED is read with the result (success or failure), so it is not in the queue table.
  ["fal queue", FAL_QUEUE_STATES, { IN_QUEUE: "pending", IN_PROGRESS: "running" }],
  ["fal webhook", FAL_WEBHOOK_STATES, { OK: "succeeded", ERROR: "failed" }],
  [
    "gemini interaction",
    GEMINI_INTERACTION_STATES,
    {
      queued: "pending",
      in_progress: "running",
      requires_continuation: "running",
      requires_action: "running",
      completed: "succeeded",
      failed: "failed",
      budget_exceeded: "failed",
      cancelled: "cancelled",
      incomplete: "failed",
    },
  ],
  [
    "gemini batch",
    GEMINI_BATCH_STATES,
    Object.fromEntries(
      Object.entries({
        PENDING: "pending",
        QUEUED: "pending",
        RUNNING: "running",
        UPDATING: "running",
        CANCELLING: "running",
        PAUSED: "running",
        SUCCEEDED: "succeeded",
        PARTIALLY_SUCCEEDED: "succeeded",
        FAILED: "failed",
        CANCELLED: "cancelled",
        EXPIRED: "expired",
      }).flatMap(([name, state]) => [
        [`BATCH_STATE_${name}`, state],
        [`JOB_STATE_${name}`, state],
      ]),
    ),
  ],
  [
    "bedrock model invocation job",
    BEDROCK_JOB_STATES,
    {
      Submitted: "pending",
      Validating: "pending",
      Scheduled: "pending",
      InProgress: "running",
      Stopping: "running",
      Completed: "succeeded",
      PartiallyCompleted: "succeeded",
      Failed: "failed",
      Stopped: "cancelled",
      Expired: "expired",
    },
  ],
  [
    "vertex batch prediction job",
    VERTEX_JOB_STATES,
    {
      JOB_STATE_QUEUED: "pending",
      JOB_STATE_PENDING: "pending",
      JOB_STATE_RUNNING: "running",
      JOB_STATE_UPDATING: "running",
      JOB_STATE_CANCELLING: "running",
      JOB_STATE_PAUSED: "running",
      JOB_STATE_SUCCEEDED: "succeeded",
      JOB_STATE_PARTIALLY_SUCCEEDED: "succeeded",
      JOB_STATE_FAILED: "failed",
      JOB_STATE_CANCELLED: "cancelled",
      JOB_STATE_EXPIRED: "expired",
    },
  ],
];

const observation = (state: string): Observation => ({ provider: "p", id: "j", state, source: "reconcile" });

describe.each(DOCUMENTED)("%s states", (_name, table, documented) => {
  it("map every documented name as documented, and nothing else", () => {
    for (const [name, state] of Object.entries(documented))
      expect([name, mapState(table, name)]).toEqual([name, state]);
    expect(Object.keys(table).sort()).toEqual(Object.keys(documented).sort());
    for (const state of Object.values(table)) expect(CANONICAL_STATES).toContain(state);
  });

  it("leave an undocumented name raw, which the reducer records as unknown-state", () => {
    const names = [
      "UNSPECIFIED",
      "JOB_STATE_UNSPECIFIED",
      "Completed",
      "completed",
      "toString",
      "__proto__",
      "",
    ];
    // Bedrock documents "Completed": a name another provider spells that way is undocumented here.
    for (const name of names.filter((candidate) => !Object.hasOwn(documented, candidate))) {
      const state = mapState(table, name);
      expect(state).toBe(name);
      expect(reduce(null, observation(state), { now: 0, unknownJobs: "adopt" })).toMatchObject({
        applied: false,
        reason: "unknown-state",
      });
    }
  });
});

describe("webhook event tables", () => {
  it("OpenAI: the eight documented types; fetch where the result or error is needed", () => {
    expect(
      Object.fromEntries(
        Object.entries(OPENAI_WEBHOOK_EVENTS).map(([type, m]) => [
          type,
          `${m.state}${m.fetch ? "+fetch" : ""}`,
        ]),
      ),
    ).toEqual({
      "response.completed": "succeeded+fetch",
      "response.failed": "failed+fetch",
      "response.incomplete": "failed+fetch",
      "response.cancelled": "cancelled",
      "batch.completed": "succeeded+fetch",
      "batch.failed": "failed+fetch",
      "batch.cancelled": "cancelled+fetch",
      "batch.expired": "expired+fetch",
    });
  });

  it("Gemini: the nine types of the webhooks guide", () => {
    expect(Object.keys(GEMINI_WEBHOOK_EVENTS).sort()).toEqual(
      [
        "batch.succeeded",
        "batch.failed",
        "batch.cancelled",
        "batch.expired",
        "interaction.completed",
        "interaction.failed",
        "interaction.cancelled",
        "interaction.requires_action",
        "video.generated",
      ].sort(),
    );
  });

  it("Anthropic: a run start is plainly running; idle, budget and termination need the session", () => {
    expect(ANTHROPIC_WEBHOOK_EVENTS["session.status_run_started"]).toBe("running");
    for (const type of ["session.status_idled", "session.budget_reached", "session.status_terminated"])
      expect(ANTHROPIC_WEBHOOK_EVENTS[type]).toBe("fetch");
    expect(ANTHROPIC_WEBHOOK_EVENTS["vault.created"]).toBeUndefined();
  });
});
