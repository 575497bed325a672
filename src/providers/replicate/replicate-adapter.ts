import type { ProviderConfigOf } from "../../config/config-schema.js";
import type { Observation } from "../../core/model.js";
import { isTerminal } from "../../core/states.js";
import { signatureHeaderCheck } from "../../webhooks/verifier-choice.js";
import type { AdapterDeps, ProviderAdapter } from "../adapter-types.js";
import { boundedResult } from "../bounded-result.js";
import { decodeJsonObject, requireJobId } from "../json-body.js";
import { fromRfc3339, latest, objectOf, textOf } from "../json-fields.js";
import { mapState, polledObservation } from "../state-map.js";
import { createStatusClient, observedIfSame } from "../status-client.js";
import { createReplicateLister } from "./replicate-list.js";
import { REPLICATE_PREDICTION_STATES } from "./replicate-states.js";

/**
 * Replicate predictions. A webhook carries the whole prediction (the same object as
 * `GET /v1/predictions/{id}`), signed with Standard Webhooks; `webhook-id` is the same on every
 * retry of one delivery, which is what dedupes it. Nothing is fetched on a webhook. Unlike the
 * official client's `validateWebhook`, the timestamp is checked and signatures are compared in
 * constant time (webhooks/schemes/standard-webhooks/node.ts). Polls need `apiKey`; without one, webhooks alone.
 */
export function createReplicateAdapter(
  provider: string,
  config: ProviderConfigOf<"replicate">,
  deps: AdapterDeps,
): ProviderAdapter {
  const apiKey = config.apiKey;
  const client =
    apiKey === undefined
      ? null
      : createStatusClient({
          provider,
          baseUrl: config.baseUrl,
          headers: { authorization: `Bearer ${apiKey}` },
          health: deps.health,
        });
  return {
    poller:
      client === null
        ? null
        : async (job, signal) => {
            const answer = await client.get(`/predictions/${encodeURIComponent(job.id)}`, signal);
            if (answer.kind !== "answer") return answer;
            const prediction = objectOf(answer.body);
            return observedIfSame(job.id, prediction.id, () => predictionObservation(provider, prediction));
          },
    pollTimeoutMs: config.timeoutSeconds * 1000,
    lister: client === null ? undefined : createReplicateLister(client),
    receiver: {
      provider,
      checkHeaders: signatureHeaderCheck(provider, config.webhook, deps.now),
      verify: deps.verifiers.webhook(provider, config.webhook, deps.now),
      parse(body, delivery) {
        const prediction = decodeJsonObject(body);
        requireJobId(prediction.id, "id");
        return { ...predictionObservation(provider, prediction), source: "webhook", deliveryId: delivery.id };
      },
    },
  };
}

/** One prediction as an observation; its output and metrics are the result once it succeeded. */
function predictionObservation(provider: string, prediction: Record<string, unknown>): Observation {
  const raw = textOf(prediction.status) ?? "(no status)";
  const state = mapState(REPLICATE_PREDICTION_STATES, raw);
  const updateTime = latest(
    fromRfc3339(prediction.created_at),
    fromRfc3339(prediction.started_at),
    fromRfc3339(prediction.completed_at),
  );
  const observation = polledObservation(provider, prediction.id, state, raw, "prediction", updateTime);
  if (!isTerminal(state)) return observation;
  const summary = () => ({
    id: prediction.id,
    status: raw,
    model: prediction.model ?? null,
    metrics: prediction.metrics ?? null,
  });
  observation.result = boundedResult(
    { ...summary(), version: prediction.version ?? null, output: prediction.output ?? null },
    summary,
  );
  if (prediction.error !== undefined && prediction.error !== null)
    observation.error = { message: prediction.error };
  return observation;
}
