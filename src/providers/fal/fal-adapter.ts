import type { ProviderConfigOf } from "../../config/config-schema.js";
import { refuseAll } from "../../webhooks/verifier-choice.js";
import type { AdapterDeps, ProviderAdapter } from "../adapter-types.js";
import { decodeJsonObject, invalidField, requireJobId, requireText } from "../json-body.js";
import { mapState } from "../state-map.js";
import { createStatusClient } from "../status-client.js";
import { createFalLister } from "./fal-list.js";
import { FAL_WEBHOOK_STATES } from "./fal-states.js";
import { createFalPoller, falWebhookObservation } from "./fal-status.js";
import { createFalVerifier, falHeaderCheck } from "./fal-webhook.js";

/**
 * fal queue requests. A job's id is the `request_id` fal answered at submission; its kind is the
 * endpoint id it was submitted to (`fal-ai/flux/dev`), or the provider's `app` is used. Webhooks
 * carry the result itself, signed with Ed25519 (fal-webhook.ts); the request id is the delivery
 * id (fal sends one webhook per request, and retries it with the same id). Polls and the request
 * list send `Authorization: Key <apiKey>`; without a key, webhooks alone.
 */
export function createFalAdapter(
  provider: string,
  config: ProviderConfigOf<"fal">,
  deps: AdapterDeps,
): ProviderAdapter {
  const headers = config.apiKey === undefined ? null : { authorization: `Key ${config.apiKey}` };
  const client =
    headers === null
      ? null
      : createStatusClient({ provider, baseUrl: config.baseUrl, headers, health: deps.health });
  const poll = client === null ? null : createFalPoller(provider, client, config.app);
  const platform =
    headers === null || config.app === undefined
      ? null
      : createStatusClient({ provider, baseUrl: config.platformBaseUrl, headers, health: deps.health });
  const webhook = config.webhook;
  const options = webhook === undefined ? null : { ...webhook, now: deps.now };
  const refuse = refuseAll(provider);
  return {
    poller: poll === null ? null : (job, signal) => poll({ id: job.id, kind: job.kind }, signal),
    pollTimeoutMs: config.timeoutSeconds * 1000,
    lister: platform === null || config.app === undefined ? undefined : createFalLister(platform, config.app),
    receiver: {
      provider,
      checkHeaders:
        options === null ? (headers) => void refuse(new Uint8Array(0), headers) : falHeaderCheck(options),
      verify: options === null ? refuse : createFalVerifier(options),
      parse(body, delivery) {
        const object = decodeJsonObject(body);
        const id = requireJobId(object.request_id, "request_id");
        // The signature covers the header's id and the body's hash: the two must name one request.
        if (id !== delivery.id)
          throw invalidField("request_id", "differs from the X-Fal-Webhook-Request-Id header");
        const raw = requireText(object.status, "status", 64);
        const observation = falWebhookObservation(
          provider,
          object,
          id,
          mapState(FAL_WEBHOOK_STATES, raw),
          raw,
          config.app,
        );
        observation.deliveryId = delivery.id;
        observation.updateTime = delivery.timestampSeconds * 1000;
        return observation;
      },
    },
  };
}
