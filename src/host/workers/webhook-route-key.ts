import type { FinalityConfig } from "../../config/config-schema.js";
import type { JobKey } from "../../core/model.js";
import { providerHealth } from "../../providers/provider-health.js";
import { createProviders } from "../../providers/provider-registry.js";
import type { WebhookParseContext } from "../../webhooks/receiver-types.js";
import { webVerifiers } from "../../webhooks/web-verifiers.js";

/** Finds which job a webhook is about, in the Worker, before it picks the job's shard. */
export type WebhookRouteKey = (
  provider: string,
  body: Uint8Array,
  headers: Headers,
) => Promise<JobKey | null>;

/**
 * A routing parse never fetches: it says the delivery is already recorded, so a thin webhook
 * (OpenAI, Gemini, Anthropic) reads as its event type and id without calling the provider. The
 * follow-up fetch, when one is needed, runs in the shard, which parses again with the real ledger.
 */
const routingContext: WebhookParseContext = {
  getJob: async () => null,
  deliveryRecorded: async () => true,
};

/**
 * The same receivers as the ledger's, built once per configuration. Only a verified webhook is
 * routed by its content: anything refused (unknown provider, bad signature, a body that does not
 * parse) answers null, and the caller hands it to a fixed shard, whose intake refuses it with the
 * same problem and counts it, exactly as the single ledger does.
 */
export function webhookRouteKey(config: FinalityConfig): WebhookRouteKey {
  const { receivers } = createProviders(config, {
    now: () => Date.now(),
    health: providerHealth,
    verifiers: webVerifiers,
  });
  return async (provider, body, headers) => {
    const receiver = receivers.get(provider);
    if (receiver === undefined) return null;
    try {
      const delivery = await receiver.verify(body, {
        id: headers.get("webhook-id"),
        timestamp: headers.get("webhook-timestamp"),
        signature: headers.get("webhook-signature"),
        get: (name) => headers.get(name),
      });
      const observation = await receiver.parse(body, delivery, routingContext);
      return { provider, id: observation.id };
    } catch {
      return null;
    }
  };
}
