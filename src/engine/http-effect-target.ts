import { redactToOrigin, redactUrlsIn } from "../core/url-redaction.js";
import type { SignInput, StandardWebhookHeaders } from "../webhooks/schemes/standard-webhooks/header.js";
import { signStandardWebhookWeb } from "../webhooks/schemes/standard-webhooks/web.js";
import { DeliveryError } from "./delivery-error.js";
import type { EffectDefinition, EffectDelivery } from "./effect-definitions.js";
import { DEFAULT_CLOUDEVENTS_SOURCE, prefixedAttributes } from "./effect-message.js";
import type { DeliveryStop, EffectTarget } from "./effect-target.js";
import { fitEffectMessage, truncatedHeader } from "./message-fit.js";
import { parseRetryAfter } from "./poller.js";
import { activeSpan, effectPropagationHeaders } from "./tracing.js";

/**
 * Delivers one effect to a URL target (signed HTTP); injected so the engine stays free of HTTP.
 * Declared here, beside its implementation, so this file need not import dispatcher.ts (no cycle).
 */
export type UrlDeliverer = (
  definition: EffectDefinition,
  delivery: EffectDelivery,
  signal: AbortSignal,
) => Promise<void>;

/**
 * What `createHttpEffectDeliverer` makes: a UrlDeliverer that also takes the dispatcher's
 * DeliveryStop. A UrlDeliverer of your own (`deliverUrl`) is always given an AbortSignal.
 */
type StopAwareDeliverer = ((
  definition: EffectDefinition,
  delivery: EffectDelivery,
  stop: AbortSignal | DeliveryStop,
) => Promise<void>) & { readonly takesDeliveryStop: true };

/** Sends one POST and reports its status; it never follows redirects and drains the answer. */
export type EffectTransport = (
  url: string,
  headers: Record<string, string>,
  body: string,
  signal: AbortSignal,
) => Promise<{ status: number; retryAfter: string | null }>;

/**
 * A transport that takes the dispatcher's DeliveryStop as it is (the Node one): any other is
 * given an AbortSignal.
 */
export type StopAwareTransport = SendWithStop & { readonly takesDeliveryStop: true };

type SendWithStop = (
  url: string,
  headers: Record<string, string>,
  body: string,
  stop: AbortSignal | DeliveryStop,
) => Promise<{ status: number; retryAfter: string | null }>;

/** Marked as taking a DeliveryStop where others take an AbortSignal. */
const marked = (f: object) => (f as { takesDeliveryStop?: unknown }).takesDeliveryStop === true;
const isStopAwareTransport = (t: EffectTransport): t is StopAwareTransport => marked(t);
const isStopAwareDeliverer = (d: UrlDeliverer): d is StopAwareDeliverer => marked(d);

/** An AbortSignal's stop, or a DeliveryStop's: the reason it was stopped, or null. */
export function stopReasonOf(stop: AbortSignal | DeliveryStop): unknown {
  if ("onStop" in stop) return stop.reason;
  return stop.aborted ? stop.reason : null;
}

/** The portable transport (Node, Workers, Deno): `fetch`. */
export const fetchTransport: EffectTransport = async (url, headers, body, signal) => {
  const response = await fetch(url, { method: "POST", headers, body, signal, redirect: "manual" });
  // Drain the body so the connection can be reused.
  await response.arrayBuffer().catch(() => undefined);
  return { status: response.status, retryAfter: response.headers.get("retry-after") };
};

/**
 * Delivers an effect as a Standard Webhooks POST: `webhook-id` is the effect's idempotency key,
 * identical on every retry, so a receiver dedupes on it. Only a 2xx counts as delivered;
 * redirects are not followed (a 3xx is a failure: the receiver's address is wrong).
 */
/** Signs one delivery the Standard Webhooks way. */
export type DeliverySigner = (input: SignInput) => StandardWebhookHeaders | Promise<StandardWebhookHeaders>;

export function createHttpEffectDeliverer(
  options: {
    userAgent?: string;
    now?: () => number;
    /** fetch by default; the Node host passes `createNodeHttpTransport()` (a StopAwareTransport). */
    transport?: EffectTransport;
    /**
     * WebCrypto by default (every runtime); the Node service passes the synchronous node:crypto
     * signer, which costs ~5 µs of CPU against ~40 µs for WebCrypto on Node.
     */
    sign?: DeliverySigner;
    /** A CloudEvents effect's `source` when it names none: this Finality instance. */
    source?: string;
  } = {},
): UrlDeliverer {
  const now = options.now ?? Date.now;
  const sign = options.sign ?? signStandardWebhookWeb;
  const transport = options.transport ?? fetchTransport;
  const send: SendWithStop = isStopAwareTransport(transport)
    ? transport
    : (url, headers, body, stop) => transport(url, headers, body, "onStop" in stop ? stop.signal : stop);
  const deliver = async (
    definition: EffectDefinition,
    delivery: EffectDelivery,
    stop: AbortSignal | DeliveryStop,
  ): Promise<void> => {
    if (!definition.url) throw new DeliveryError(`effect "${definition.name}" has no url`);
    const span = activeSpan();
    // CloudEvents over HTTP: structured mode is the event as the body; binary mode its
    // attributes as `ce-*` headers (the HTTP protocol binding) and `data` as the body.
    // HTTP itself has no message limit; a receiver's (often 1 MB) is the effect's `maxMessageBytes`.
    const message = fitEffectMessage(
      definition,
      delivery,
      options.source ?? DEFAULT_CLOUDEVENTS_SOURCE,
      definition.maxMessageBytes ?? null,
    );
    const body = message.body;
    const truncated = truncatedHeader(message);
    // Added one by one to a fresh object, in the order they go out: a literal with keys after a
    // spread costs V8 a runtime call per key and a new hidden class each time.
    const headers = prefixedAttributes(message, "ce-");
    headers["content-type"] = message.contentType;
    headers["user-agent"] = options.userAgent ?? "finality";
    headers["idempotency-key"] = delivery.idempotencyKey;
    headers["finality-attempt"] = String(delivery.attempt);
    if (truncated !== null) headers["finality-truncated"] = truncated;
    // W3C trace context of this attempt's span, so the receiver's trace continues it.
    Object.assign(headers, effectPropagationHeaders());
    if (definition.secret) {
      Object.assign(
        headers,
        await sign({
          id: delivery.idempotencyKey,
          timestampSeconds: now() / 1000,
          body,
          secret: definition.secret,
        }),
      );
    } else {
      headers["webhook-id"] = delivery.idempotencyKey;
    }
    // The URL may hold the receiver's credential: errors name its scheme, host and port only
    // (worked out on failure: parsing the URL costs each delivery), and a transport's own
    // message (fetch and node:http quote the URL) is scrubbed of it.
    let answer: { status: number; retryAfter: string | null };
    try {
      answer = await send(definition.url, headers, body, stop);
    } catch (error) {
      const stopped = stopReasonOf(stop);
      const reason = stopped !== null ? abortReason(stopped) : transportMessage(error);
      throw new DeliveryError(
        `POST ${redactToOrigin(definition.url)} failed: ${redactUrlsIn(reason, [definition.url])}`,
      );
    }
    span?.setAttribute("http.response.status_code", answer.status);
    if (answer.status >= 200 && answer.status < 300) return;
    throw new DeliveryError(
      `POST ${redactToOrigin(definition.url)} answered ${answer.status}`,
      parseRetryAfter(answer.retryAfter, now()),
    );
  };
  const stopAware: StopAwareDeliverer = Object.assign(deliver, { takesDeliveryStop: true as const });
  return stopAware;
}

/** The HTTP destination as an effect target (what the dispatcher uses for `url` effects). */
export function httpEffectTarget(deliver: UrlDeliverer): EffectTarget {
  return isStopAwareDeliverer(deliver)
    ? { kind: "url", deliver, deliverWithStop: deliver }
    : { kind: "url", deliver };
}

/** Why the dispatcher stopped the attempt ("timed out", "lost its claim", ...). */
function abortReason(reason: unknown): string {
  if (reason instanceof DeliveryError) return reason.message;
  return "timed out";
}

/** fetch wraps the network error in `cause` ("fetch failed" alone says little). */
function transportMessage(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause: unknown = error.cause;
  return cause instanceof Error && cause.message !== error.message
    ? `${error.message}: ${cause.message}`
    : error.message;
}
