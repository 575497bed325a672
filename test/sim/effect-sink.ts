import type { EffectDelivery } from "../../src/engine/effect-definitions.js";

export interface SinkDelivery {
  key: string;
  effect: string;
  type: EffectDelivery["type"];
  provider: string;
  jobId: string;
  jobState: string;
  /** The delivered job's settlement, to hold against the ledger's (delivered-job-as-settled). */
  settledAt: number | null;
  settledBy: string | null;
  attempt: number;
  at: number;
}

/**
 * The effect receiver, as README tells receivers to be: it keeps every delivery it was handed
 * and applies each idempotency key once. `applied` counts how often an application happened
 * per (job, effect, type), which must end at exactly one.
 */
export class EffectSink {
  readonly deliveries: SinkDelivery[] = [];
  readonly appliedKeys = new Set<string>();
  /** `provider/id/effect/type` → idempotency keys applied for it. */
  readonly appliedFor = new Map<string, string[]>();
  /** Idempotency keys whose delivery is in flight right now. */
  readonly inFlight = new Set<string>();

  receive(delivery: EffectDelivery, at: number): void {
    const record: SinkDelivery = {
      key: delivery.idempotencyKey,
      effect: delivery.effect,
      type: delivery.type,
      provider: delivery.job.provider,
      jobId: delivery.job.id,
      jobState: delivery.job.state,
      settledAt: delivery.job.settledAt,
      settledBy: delivery.job.settledBy,
      attempt: delivery.attempt,
      at,
    };
    this.deliveries.push(record);
    if (this.appliedKeys.has(record.key)) return;
    this.appliedKeys.add(record.key);
    const target = sinkTarget(record.provider, record.jobId, record.effect, record.type);
    this.appliedFor.set(target, [...(this.appliedFor.get(target) ?? []), record.key]);
  }
}

export function sinkTarget(provider: string, jobId: string, effect: string, type: string): string {
  return `${provider}/${jobId}/${effect}/${type}`;
}
