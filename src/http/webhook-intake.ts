import type { Context } from "@opentelemetry/api";
import { storableDeliveryId } from "../core/bounded-value.js";
import { FinalityError, isFinalityError } from "../core/errors.js";
import type { Finality } from "../engine/finality.js";
import { engineOf } from "../engine/finality-engine.js";
import { captureContext, inSpan, resumeIn, tracingOn } from "../engine/tracing.js";
import type { WebhookParseContext, WebhookReceiver } from "../webhooks/receiver-types.js";
import type { ReceivedWebhookHeaders } from "../webhooks/schemes/standard-webhooks/node.js";
import type { VerifiedWebhook } from "../webhooks/signature-common.js";
import type { ServiceMetrics, WebhookOutcome } from "./service-metrics.js";

/** The 200 answer to a webhook: how the ledger took it. */
export interface WebhookAnswer {
  outcome: WebhookOutcome;
  applied: boolean;
  provider: string;
  jobId: string;
  state: string | null;
  version: number | null;
}

/**
 * The answer's JSON text, the same as `JSON.stringify(answer)`, made without walking the object:
 * every webhook's answer (the generic stringify cost about 6,000 instructions a webhook, by
 * callgrind). `outcome` is one of WebhookOutcome's names, which need no escaping.
 */
export function webhookAnswerJson(answer: WebhookAnswer): string {
  const { state, version } = answer;
  return `{"outcome":"${answer.outcome}","applied":${answer.applied},"provider":${JSON.stringify(answer.provider)},"jobId":${JSON.stringify(answer.jobId)},"state":${state === null ? "null" : JSON.stringify(state)},"version":${version === null ? "null" : version}}`;
}

export interface WebhookIntake {
  /**
   * One webhook, in the only safe order: find the provider, read the raw bytes (the caller's
   * reader enforces the body limit), verify the signature over them, parse (which for a thin
   * payload fetches the object from the provider's status API), ingest. Resolves once
   * the ingest has committed; throws a FinalityError for anything refused, which changed nothing.
   * Every outcome is counted, and `log` receives the fields for the request's log line.
   * `afterVerify`, when given, runs the part after the signature check (parse, ingest) inside
   * it, and nothing before it is traced: a verified sender's trace (webhook-tracing.ts).
   */
  receive(
    provider: string,
    headers: ReceivedWebhookHeaders,
    readBody: () => Promise<Uint8Array>,
    log: Record<string, unknown>,
    afterVerify?: AfterVerify,
  ): Promise<WebhookAnswer>;
}

export type AfterVerify = <T>(rest: () => Promise<T>) => Promise<T>;

/** Shared by the Hono route and the Node fast path, so both behave the same by construction. */
export function createWebhookIntake(options: {
  finality: Finality;
  receivers: ReadonlyMap<string, WebhookReceiver>;
  metrics: ServiceMetrics;
}): WebhookIntake {
  const { receivers, metrics } = options;
  const finality = engineOf(options.finality);
  const context: WebhookParseContext = {
    getJob: (key) => finality.getJob(key),
    deliveryRecorded: (provider, deliveryId) => finality.store.hasDelivery(provider, deliveryId),
  };
  /** The part after the signature check: parse, ingest, count; `traced` is the span to resume in. */
  async function take(
    receiver: WebhookReceiver,
    provider: string,
    body: Uint8Array,
    delivery: VerifiedWebhook,
    log: Record<string, unknown>,
    traced: Context | undefined,
  ): Promise<WebhookAnswer> {
    const parsed = receiver.parse(body, delivery, context);
    const observation = parsed instanceof Promise ? await parsed : parsed;
    log.jobId = observation.id;
    // A provider's own time out of range or ahead of ours is not refused: a 400 would cost the
    // job its completion. Ingest drops or cuts it and records why (core/ordering-time.ts).
    const started = performance.now();
    const outcome = await (traced
      ? resumeIn(traced, () => finality.ingestTrusted(observation))
      : finality.ingestTrusted(observation));
    metrics.ingestCommitted((performance.now() - started) / 1000);
    const result: WebhookOutcome = outcome.reason ?? "applied";
    metrics.eventRecorded("webhook", outcome.applied, outcome.reason);
    metrics.webhookReceived(provider, result);
    if (outcome.settled && outcome.job !== null) metrics.jobSettled(outcome.job);
    log.outcome = result;
    return {
      outcome: result,
      applied: outcome.applied,
      provider,
      jobId: observation.id,
      state: outcome.job?.state ?? null,
      version: outcome.job?.version ?? null,
    };
  }

  return {
    async receive(provider, headers, readBody, log, afterVerify) {
      log.provider = provider;
      // The intake's span, to resume in after each await (see engine/tracing.ts).
      const traced = captureContext();
      try {
        const receiver = receivers.get(provider);
        if (receiver === undefined) {
          throw new FinalityError("unknown-provider", `no provider named "${provider}" is configured`, {
            details: { provider },
          });
        }
        // Before the body: a request that cannot be signed is refused without reading (or holding) it.
        receiver.checkHeaders?.(headers);
        const body = await readBody();
        // Receivers that can answer at once do (the generic one always does): awaiting only a real
        // promise keeps the hot path free of extra microtask turns.
        const verified =
          tracingOn() && afterVerify === undefined
            ? resumeIn(traced, () => inSpan("verify", {}, async () => receiver.verify(body, headers)))
            : receiver.verify(body, headers);
        const sent = verified instanceof Promise ? await verified : verified;
        // The id the ledger keys the delivery by, the same for the redelivery check and the write.
        const id = storableDeliveryId(sent.id);
        const delivery = id === sent.id ? sent : { ...sent, id };
        log.deliveryId = delivery.id;
        if (afterVerify === undefined) return await take(receiver, provider, body, delivery, log, traced);
        return await afterVerify(() => take(receiver, provider, body, delivery, log, captureContext()));
      } catch (error) {
        const outcome = refusalOutcome(error);
        // Unknown names share one label: a caller cannot grow the metric without bound.
        metrics.webhookReceived(receivers.has(provider) ? provider : "(unknown)", outcome);
        log.outcome = outcome;
        if (isFinalityError(error, "signature-invalid")) log.reason = error.details.reason;
        throw error;
      }
    },
  };
}

function refusalOutcome(error: unknown): WebhookOutcome {
  if (!(error instanceof FinalityError)) return "error";
  switch (error.code) {
    case "unknown-provider":
      return "unknown-provider";
    case "payload-too-large":
      return "too-large";
    case "signature-invalid":
      return "signature-invalid";
    case "invalid-observation":
    case "invalid-request":
      return "malformed";
    case "shutting-down":
    case "store-unavailable":
    case "overloaded":
      return "unavailable";
    default:
      return "error";
  }
}
