import type { ProviderConfigOf } from "../../config/config-schema.js";
import type { Observation } from "../../core/model.js";
import type { WebhookParseContext } from "../../webhooks/receiver-types.js";
import { signatureHeaderCheck } from "../../webhooks/verifier-choice.js";
import type { AdapterDeps, ProviderAdapter } from "../adapter-types.js";
import { decodeJsonObject, requireJobId, requireText } from "../json-body.js";
import { fromRfc3339, objectOf } from "../json-fields.js";
import { createStatusClient } from "../status-client.js";
import { type ObserveObject, observeThinEvent, type ThinEvent } from "../thin-webhook.js";
import { createAnthropicLister } from "./anthropic-list.js";
import { ANTHROPIC_WEBHOOK_EVENTS } from "./anthropic-states.js";
import { createAnthropicObserver } from "./anthropic-status.js";

/**
 * Anthropic: message batches (polled only: they send no webhooks) and Managed Agents sessions
 * (Standard Webhooks with a thin body `{type: "event", id, created_at, data: {type, id, ...}}`).
 * Polls send `x-api-key` and `anthropic-version`, and the Managed Agents beta header on sessions.
 */
export function createAnthropicAdapter(
  provider: string,
  config: ProviderConfigOf<"anthropic">,
  deps: AdapterDeps,
): ProviderAdapter {
  const client = createStatusClient({
    provider,
    baseUrl: config.baseUrl,
    headers: { "x-api-key": config.apiKey, "anthropic-version": config.anthropicVersion },
    health: deps.health,
  });
  const observe = createAnthropicObserver(provider, client, config.sessionsBeta);
  const fetchTimeoutMs = config.fetchTimeoutSeconds * 1000;
  return {
    poller: (job, signal) => observe({ id: job.id, kind: job.kind, job }, signal),
    pollTimeoutMs: config.timeoutSeconds * 1000,
    lister: createAnthropicLister(client, config.sessionsBeta, config.discover?.kinds),
    receiver: {
      provider,
      checkHeaders: signatureHeaderCheck(provider, config.webhook, deps.now),
      verify: deps.verifiers.webhook(provider, config.webhook, deps.now),
      parse: (body, delivery, context) =>
        parseAnthropicWebhook(provider, body, delivery.id, { observe, context, fetchTimeoutMs }),
    },
  };
}

async function parseAnthropicWebhook(
  provider: string,
  body: Uint8Array,
  deliveryId: string,
  deps: { observe: ObserveObject; context: WebhookParseContext; fetchTimeoutMs: number },
): Promise<Observation> {
  const event = readAnthropicEvent(decodeJsonObject(body));
  // A session's run is anchored on the job's registration: the fetch needs the ledger's record.
  const job = event.fetch ? await deps.context.getJob({ provider, id: event.id }) : null;
  return observeThinEvent(
    provider,
    event,
    deliveryId,
    (signal) => deps.observe({ id: event.id, kind: event.kind, job }, signal),
    deps.fetchTimeoutMs,
    deps.context,
  );
}

export function readAnthropicEvent(envelope: Record<string, unknown>): ThinEvent {
  const data = objectOf(envelope.data);
  const type = requireText(data.type, "data.type", 128);
  const id = requireJobId(data.id, "data.id");
  const meaning = ANTHROPIC_WEBHOOK_EVENTS[type];
  const isSession = meaning !== undefined;
  return {
    id,
    kind: isSession ? "session" : null,
    type,
    state: meaning === undefined || meaning === "fetch" ? null : meaning,
    fetch: meaning === "fetch",
    // The session has ended, in a way only the fetch tells: one still running is the API lagging.
    // (Not `session.archived`: an archived session that never ran reads as pending for good.)
    announcesTerminal: type === "session.status_terminated",
    updateTime: fromRfc3339(envelope.created_at),
    // A run start clears any "waiting for input" flag from the run's previous pause.
    ...(meaning === "running" ? { result: null } : {}),
  };
}
