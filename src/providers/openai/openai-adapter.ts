import type { ProviderConfigOf } from "../../config/config-schema.js";
import type { Observation } from "../../core/model.js";
import type { WebhookParseContext } from "../../webhooks/receiver-types.js";
import { signatureHeaderCheck } from "../../webhooks/verifier-choice.js";
import type { AdapterDeps, ProviderAdapter } from "../adapter-types.js";
import { decodeJsonObject, requireJobId, requireText } from "../json-body.js";
import { fromUnixSeconds, objectOf } from "../json-fields.js";
import { createStatusClient } from "../status-client.js";
import { type ObserveObject, observeThinEvent, type ThinEvent, thinEventOf } from "../thin-webhook.js";
import { createMistralBatchLister, createTogetherBatchLister } from "./openai-compat-list.js";
import { createOpenAIBatchLister } from "./openai-list.js";
import { OPENAI_WEBHOOK_EVENTS } from "./openai-states.js";
import { createOpenAIObserver } from "./openai-status.js";

/**
 * OpenAI: background responses and batches. Webhooks follow Standard Webhooks with a thin body
 * `{id: "evt_...", object: "event", created_at, type, data: {id}}`; a secret without `whsec_` is
 * used as its raw bytes, as OpenAI's SDK does (`webhooks.unwrap`). Polls send `Authorization: Bearer`.
 */
export function createOpenAIAdapter(
  provider: string,
  config: ProviderConfigOf<"openai">,
  deps: AdapterDeps,
): ProviderAdapter {
  const client = createStatusClient({
    provider,
    baseUrl: config.baseUrl,
    headers: { authorization: `Bearer ${config.apiKey}` },
    health: deps.health,
  });
  const observe = createOpenAIObserver(provider, client, config.compat);
  const fetchTimeoutMs = config.fetchTimeoutSeconds * 1000;
  return {
    poller: (job, signal) => observe({ id: job.id, kind: job.kind, job }, signal),
    pollTimeoutMs: config.timeoutSeconds * 1000,
    lister:
      config.compat === "mistral"
        ? createMistralBatchLister(client)
        : config.compat === "together"
          ? createTogetherBatchLister(client)
          : createOpenAIBatchLister(client),
    receiver: {
      provider,
      checkHeaders: signatureHeaderCheck(provider, config.webhook, deps.now),
      verify: deps.verifiers.webhook(provider, config.webhook, deps.now),
      parse: (body, delivery, context) =>
        parseOpenAIWebhook(provider, body, delivery.id, observe, fetchTimeoutMs, context),
    },
  };
}

function parseOpenAIWebhook(
  provider: string,
  body: Uint8Array,
  deliveryId: string,
  observe: ObserveObject,
  fetchTimeoutMs: number,
  context?: WebhookParseContext,
): Promise<Observation> {
  const event = readOpenAIEvent(decodeJsonObject(body));
  return observeThinEvent(
    provider,
    event,
    deliveryId,
    (signal) => observe({ id: event.id, kind: event.kind, job: null }, signal),
    fetchTimeoutMs,
    context,
  );
}

/** The envelope as a thin event; a type Finality does not track keeps its own name as the state. */
export function readOpenAIEvent(envelope: Record<string, unknown>): ThinEvent {
  const type = requireText(envelope.type, "type", 128);
  const data = objectOf(envelope.data);
  const meaning = OPENAI_WEBHOOK_EVENTS[type];
  // realtime.call.incoming carries `call_id` and no `id`: it still gets a key to be recorded under.
  const id = requireJobId(data.id ?? data.call_id ?? envelope.id, "data.id");
  return thinEventOf(id, type, meaning, fromUnixSeconds(envelope.created_at));
}
