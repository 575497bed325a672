import fc from "fast-check";
import type { Random } from "../../src/core/clock.js";
import type { Observation } from "../../src/core/model.js";
import { openaiObservation } from "../../src/providers/openai/openai-status.js";
import { openaiBatch } from "../providers/schema-answers/openai-answers.js";

/** An OpenAI batch status with each canonical meaning (the Batch guide's table). */
const BATCH_STATUS: Readonly<Record<string, string>> = {
  pending: "validating",
  running: "in_progress",
  succeeded: "completed",
  failed: "failed",
  expired: "expired",
  cancelled: "cancelled",
};

/**
 * The simulator's answer re-dated as a schema-valid OpenAI batch would date it: a `Batch` object
 * with the answer's state is drawn from OpenAI's schema (its times anywhere, null or missing; test/
 * providers/schema-answers) and read by the real adapter, and the answer takes the time the
 * adapter read (none when it read none). The state stays the simulator's: only the dating is the
 * provider's, so the run's expectations hold while the ledger meets times the schema allows.
 * States without a batch status (`lost`) are left as they came.
 */
export function schemaDatedObservation(observation: Observation, random: Random): Observation {
  const status = BATCH_STATUS[observation.state];
  if (status === undefined) return observation;
  const seed = Math.floor(random() * 2 ** 31);
  const [body] = fc.sample(openaiBatch(observation.id, fc.constant(status)), { numRuns: 1, seed });
  const read = openaiObservation(observation.provider, "batch", body as Record<string, unknown>);
  const { updateTime: _simulated, ...rest } = observation;
  return read.updateTime === undefined ? rest : { ...rest, updateTime: read.updateTime };
}
