import type { ProviderConfigOf } from "../../config/config-schema.js";
import type { WebhookReceiver } from "../../webhooks/receiver-types.js";
import { signatureHeaderCheck } from "../../webhooks/verifier-choice.js";
import type { AdapterDeps, ProviderAdapter } from "../adapter-types.js";
import { mapState } from "../state-map.js";
import { createGenericLister } from "./generic-lister.js";
import { createGenericPoller } from "./generic-poller.js";
import { parseGenericWebhook } from "./generic-webhook.js";

/**
 * Any HTTP job API, without code: webhooks in the generic body (signed with Standard Webhooks,
 * an HMAC header, or Stripe's scheme), polls of a configured URL with JSON paths, and an optional
 * table from the API's state names to canonical ones.
 */
export function createGenericAdapter(
  provider: string,
  config: ProviderConfigOf<"generic">,
  deps: AdapterDeps,
): ProviderAdapter {
  const states = config.states;
  const poll = config.poll;
  const receiver: WebhookReceiver = {
    provider,
    checkHeaders: signatureHeaderCheck(provider, config.webhook, deps.now),
    verify: deps.verifiers.webhook(provider, config.webhook, deps.now),
    // The hot path: synchronous, and without a state table nothing but the body parser runs.
    parse:
      states === undefined
        ? (body, delivery) => parseGenericWebhook(body, provider, delivery.id)
        : (body, delivery) => {
            const observation = parseGenericWebhook(body, provider, delivery.id);
            observation.state = mapState(states, observation.state);
            return observation;
          },
  };
  return {
    receiver,
    poller:
      poll === undefined
        ? null
        : createGenericPoller(provider, {
            url: poll.url,
            headers: poll.headers ?? {},
            paths: poll.paths,
            states,
            health: deps.health,
          }),
    pollTimeoutMs: poll?.timeoutSeconds === undefined ? undefined : poll.timeoutSeconds * 1000,
    lister:
      config.discover?.url === undefined
        ? undefined
        : createGenericLister(provider, {
            url: config.discover.url,
            headers: config.discover.headers ?? poll?.headers,
            states,
            health: deps.health,
            timeoutMs:
              config.discover.timeoutSeconds === undefined
                ? undefined
                : config.discover.timeoutSeconds * 1000,
          }),
  };
}
