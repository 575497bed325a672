import { SpanStatusCode } from "@opentelemetry/api";
import type { Effect } from "../core/model.js";
import { redactToOrigin } from "../core/url-redaction.js";
import type { EffectDefinition } from "./effect-definitions.js";
import { continuedFrom, inSpan, SpanKind, tracingOn } from "./tracing.js";

/**
 * One effect delivery attempt as a span (messaging conventions: the dispatcher "sends" to a
 * destination). It continues the trace of the observation that settled the job: its parent is
 * the `traceparent` stored with the outbox row, and it links to it too, so a trace view shows
 * intake, transaction and every attempt together even when the attempt runs hours later.
 */
export function traceDelivery<T extends { outcome: string; error?: string }>(
  effect: Effect,
  definition: EffectDefinition | undefined,
  work: () => Promise<T>,
): Promise<T> {
  if (!tracingOn()) return work();
  const settledBy = continuedFrom(effect.traceParent);
  return inSpan(
    `send ${effect.name}`,
    {
      kind: SpanKind.PRODUCER,
      ...(settledBy ?? {}),
      attributes: {
        "messaging.system": "finality",
        "messaging.operation.type": "send",
        "messaging.operation.name": "deliver",
        "messaging.destination.name": effect.name,
        "messaging.message.id": effect.idempotencyKey,
        "finality.effect.destination": destinationOf(definition),
        "finality.effect.attempt": effect.attempts,
        "finality.effect.trigger": effect.trigger,
        "finality.provider": effect.provider,
        "finality.job.id": effect.jobId,
      },
    },
    async (span) => {
      const attempt = await work();
      span?.setAttribute("finality.effect.outcome", attempt.outcome);
      if (attempt.error !== undefined) {
        span?.setAttribute("error.type", attempt.outcome);
        span?.setStatus({ code: SpanStatusCode.ERROR, message: attempt.error });
      }
      return attempt;
    },
  );
}

/** Where the attempt goes, without a credential the URL may hold (scheme, host and port only). */
function destinationOf(definition: EffectDefinition | undefined): string {
  if (definition === undefined) return "(unknown)";
  if (definition.url) return redactToOrigin(definition.url);
  return definition.handler ? "handler" : "(none)";
}
