import type { Observation } from "../../core/model.js";
import { isCanonicalState, isTerminal } from "../../core/states.js";
import { boundedResult } from "../bounded-result.js";
import { fromRfc3339, objectOf, textOf } from "../json-fields.js";
import { mapState } from "../state-map.js";
import { encodePath, observedIfSame, type StatusClient } from "../status-client.js";
import type { ObserveObject } from "../thin-webhook.js";
import {
  GEMINI_BATCH_STATES,
  GEMINI_INTERACTION_STATES,
  type GeminiKind,
  geminiKindOf,
} from "./gemini-states.js";

/** google.rpc.Code CANCELLED: an operation that ended this way was cancelled, not failed. */
const RPC_CANCELLED = 1;

/**
 * Reads an operation or a batch (`GET /{apiVersion}/{name}`, the name's `/` kept, as the SDK
 * sends it) or an interaction (`GET /{apiVersion}/interactions/{id}`).
 */
export function createGeminiObserver(
  provider: string,
  client: StatusClient,
  apiVersion: string,
): ObserveObject {
  return async (ref, signal) => {
    const kind = geminiKindOf(ref.id, ref.kind);
    if (kind === null)
      return {
        kind: "failed",
        error: `cannot tell what "${ref.id}" is: name it batches/... or operations/..., or set its kind`,
      };
    const name = kind === "interaction" ? `interactions/${ref.id.replace(/^interactions\//, "")}` : ref.id;
    const path = encodePath(name);
    if (path === null) return { kind: "failed", error: `"${ref.id}" is not a valid resource name` };
    const answer = await client.get(`/${apiVersion}/${path}`, signal);
    if (answer.kind !== "answer") return answer;
    const object = objectOf(answer.body);
    const answered = kind === "interaction" ? `interactions/${String(object.id)}` : object.name;
    return observedIfSame(name, answered, () => geminiObservation(provider, ref.id, kind, object));
  };
}

/** One Gemini object as an observation of the job `id`. */
function geminiObservation(
  provider: string,
  id: string,
  kind: GeminiKind,
  object: Record<string, unknown>,
): Observation {
  const reading = kind === "interaction" ? readInteraction(object) : readOperation(object);
  const observation: Observation = {
    provider,
    id,
    kind,
    source: "reconcile",
    state: reading.state,
    rawState: reading.raw,
  };
  if (reading.updateTime !== undefined) observation.updateTime = reading.updateTime;
  if (reading.result !== undefined) observation.result = reading.result;
  if (reading.error !== undefined) observation.error = reading.error;
  return observation;
}

interface Reading {
  state: string;
  raw: string;
  updateTime?: number | undefined;
  result?: unknown;
  error?: unknown;
}

/**
 * A batch is an Operation whose `metadata` is the GenerateContentBatch (`metadata.state`); Vertex
 * puts `state` at the top. A plain long-running operation has only `done`, then `error` or `response`.
 */
function readOperation(operation: Record<string, unknown>): Reading {
  const metadata = objectOf(operation.metadata);
  const batchState = textOf(metadata.state) ?? textOf(operation.state);
  const updateTime = fromRfc3339(metadata.updateTime ?? operation.updateTime);
  if (batchState !== undefined) {
    const state = mapState(GEMINI_BATCH_STATES, batchState);
    const reading: Reading = { state, raw: batchState, updateTime };
    if (!isTerminal(state)) return reading;
    const output = metadata.output ?? operation.response ?? null;
    const summary = {
      name: operation.name,
      state: batchState,
      batchStats: metadata.batchStats ?? null,
      endTime: metadata.endTime ?? null,
    };
    reading.result = boundedResult(
      { ...summary, output, ...(batchState.endsWith("PARTIALLY_SUCCEEDED") ? { partial: true } : {}) },
      () => summary,
    );
    if (operation.error !== undefined) reading.error = operation.error;
    return reading;
  }
  if (operation.done !== true) return { state: "running", raw: "done:false", updateTime };
  if (operation.error !== undefined && operation.error !== null) {
    const code = objectOf(operation.error).code;
    return {
      state: code === RPC_CANCELLED ? "cancelled" : "failed",
      raw: "done:error",
      updateTime,
      error: operation.error,
    };
  }
  // google.longrunning.Operation: once done, "exactly one of error or response can be set"; an
  // operation whose method returns Empty has neither, and it ended without error (AIP-151).
  if (operation.response === undefined || operation.response === null)
    return { state: "succeeded", raw: "done:empty", updateTime, result: null };
  return {
    state: "succeeded",
    raw: "done:response",
    updateTime,
    result: boundedResult(operation.response, () => ({ name: operation.name })),
  };
}

function readInteraction(interaction: Record<string, unknown>): Reading {
  const raw = textOf(interaction.status) ?? "(no status)";
  const state = mapState(GEMINI_INTERACTION_STATES, raw);
  const reading: Reading = { state, raw, updateTime: fromRfc3339(interaction.updated) };
  if (raw === "requires_action")
    return { ...reading, result: { id: interaction.id, status: raw, waitingForInput: true } };
  if (!isCanonicalState(state)) return reading;
  if (!isTerminal(state)) return { ...reading, result: null };
  const { input: _input, ...rest } = interaction;
  reading.result = boundedResult(rest, () => ({
    id: interaction.id,
    status: raw,
    usage: interaction.usage ?? null,
  }));
  if (Array.isArray(interaction.errors) && interaction.errors.length > 0)
    reading.error = { errors: interaction.errors };
  else if (raw !== "completed" && raw !== "cancelled") reading.error = { status: raw };
  return reading;
}
