import type { ProviderConfigOf } from "../../config/config-schema.js";
import type { Observation } from "../../core/model.js";
import { isTerminal } from "../../core/states.js";
import { createJwtVerifier, isCompactJwt } from "../../webhooks/jwt-signature.js";
import type {
  SignatureHeaderCheck,
  WebhookParseContext,
  WebhookVerifier,
} from "../../webhooks/receiver-types.js";
import type { VerifiedWebhook } from "../../webhooks/signature-common.js";
import { signatureHeaderCheck } from "../../webhooks/verifier-choice.js";
import type { AdapterDeps, ProviderAdapter } from "../adapter-types.js";
import { decodeJsonObject, requireJobId, requireText } from "../json-body.js";
import { fromRfc3339, objectOf, textOf } from "../json-fields.js";
import { createStatusClient } from "../status-client.js";
import { type ObserveObject, observeThinEvent, type ThinEvent, thinEventOf } from "../thin-webhook.js";
import { createGeminiBatchLister } from "./gemini-list.js";
import { GEMINI_WEBHOOK_EVENTS } from "./gemini-states.js";
import { createGeminiObserver } from "./gemini-status.js";

/**
 * Gemini API: long-running operations (e.g. Veo videos), batch jobs and background interactions.
 * Project webhooks are Standard Webhooks; per-request webhooks carry an RS256 JWT in
 * `Webhook-Signature`, checked against a JWKS, and since no claim is documented to bind the body,
 * their body is only a hint: the object is always fetched. Polls send `x-goog-api-key`.
 */
export function createGeminiAdapter(
  provider: string,
  config: ProviderConfigOf<"gemini">,
  deps: AdapterDeps,
): ProviderAdapter {
  const client = createStatusClient({
    provider,
    baseUrl: config.baseUrl,
    headers: { "x-goog-api-key": config.apiKey },
    health: deps.health,
  });
  const observe = createGeminiObserver(provider, client, config.apiVersion);
  const fetchTimeoutMs = config.fetchTimeoutSeconds * 1000;
  return {
    poller: (job, signal) => observe({ id: job.id, kind: job.kind, job }, signal),
    pollTimeoutMs: config.timeoutSeconds * 1000,
    lister: createGeminiBatchLister(client, config.apiVersion),
    receiver: {
      provider,
      checkHeaders: geminiHeaderCheck(provider, config, deps),
      verify: geminiVerifier(provider, config, deps),
      parse: (body, delivery, context) =>
        parseGeminiWebhook(provider, body, delivery, observe, fetchTimeoutMs, context),
    },
  };
}

function geminiVerifier(
  provider: string,
  config: ProviderConfigOf<"gemini">,
  deps: AdapterDeps,
): WebhookVerifier {
  const { now } = deps;
  const standard = deps.verifiers.webhook(
    provider,
    config.webhook?.secrets ? config.webhook : undefined,
    now,
  );
  const jwt = config.webhook?.jwt;
  if (jwt === undefined) return standard;
  const verifyJwt = createJwtVerifier({
    jwks: jwt.jwks ?? jwt.jwksUrl,
    audience: jwt.audience,
    issuer: jwt.issuer,
    now,
  });
  return (body, headers) =>
    isCompactJwt(headers.signature) ? verifyJwt(headers.signature, headers, body) : standard(body, headers);
}

/** The headers the verifier above needs: a JWT in webhook-signature, else Standard Webhooks' three. */
function geminiHeaderCheck(
  provider: string,
  config: ProviderConfigOf<"gemini">,
  deps: AdapterDeps,
): SignatureHeaderCheck {
  const standard = signatureHeaderCheck(
    provider,
    config.webhook?.secrets ? config.webhook : undefined,
    deps.now,
  );
  if (config.webhook?.jwt === undefined) return standard;
  return (headers) => {
    if (!isCompactJwt(headers.signature)) standard(headers);
  };
}

function parseGeminiWebhook(
  provider: string,
  body: Uint8Array,
  delivery: VerifiedWebhook,
  observe: ObserveObject,
  fetchTimeoutMs: number,
  context?: WebhookParseContext,
): Promise<Observation> {
  const event = readGeminiEvent(decodeJsonObject(body));
  // An unsigned body is a hint only: what it names is fetched, whatever its type says.
  if (delivery.bodySigned === false && event.kind !== null) {
    event.fetch = true;
    // Not trusted to settle the job, but still what the fetch is expected to see.
    event.announcesTerminal = event.state !== null && isTerminal(event.state);
    event.state = null;
  }
  return observeThinEvent(
    provider,
    event,
    delivery.id,
    (signal) => observe({ id: event.id, kind: event.kind, job: null }, signal),
    fetchTimeoutMs,
    context,
  );
}

/**
 * `{type, version, timestamp, data: {id, ...}}`. Whether a batch's `data.id` is `batches/x` or the
 * bare `x` is not documented (the guide shows `batch_123456`): a bare id gets the `batches/` prefix,
 * so that it names the job that was registered under the batch's resource name.
 */
export function readGeminiEvent(envelope: Record<string, unknown>): ThinEvent {
  const type = requireText(envelope.type, "type", 128);
  const data = objectOf(envelope.data);
  const meaning = GEMINI_WEBHOOK_EVENTS[type];
  let id = requireJobId(data.id, "data.id");
  // The rule holds for the id the job is kept under: the prefix can take it past the limit.
  if (meaning?.kind === "batch" && !id.includes("/")) id = requireJobId(`batches/${id}`, "data.id");
  const event = thinEventOf(id, type, meaning, fromRfc3339(envelope.timestamp));
  if (meaning?.state === "failed")
    event.error = { code: data.error_code ?? null, message: textOf(data.error_message) ?? null };
  if (type === "interaction.requires_action")
    event.result = { id: data.id, status: "requires_action", waitingForInput: true };
  return event;
}
