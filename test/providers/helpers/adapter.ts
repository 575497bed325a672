import { providerSchema } from "../../../src/config/provider-config-schema.js";
import type { Job } from "../../../src/core/model.js";
import type { PollResult } from "../../../src/engine/poller.js";
import type { ProviderAdapter } from "../../../src/providers/adapter-types.js";
import { createProviderAdapter } from "../../../src/providers/create-provider-adapter.js";
import { createProviderHealth, type ProviderHealth } from "../../../src/providers/provider-health.js";
import { nodeVerifiers } from "../../../src/webhooks/node-verifiers.js";

/** An adapter built from a raw configuration entry, validated by the real schema. */
export function adapterFor(
  name: string,
  raw: Record<string, unknown>,
  options: { health?: ProviderHealth; now?: () => number } = {},
): ProviderAdapter {
  return createProviderAdapter(name, providerSchema.parse(raw), {
    now: options.now ?? Date.now,
    health: options.health ?? createProviderHealth(),
    verifiers: nodeVerifiers,
  });
}

/** One poll of `id` as the reconciler would make it. */
export function pollOnce(adapter: ProviderAdapter, id: string, job: Partial<Job> = {}): Promise<PollResult> {
  if (adapter.poller === null) throw new Error("this adapter cannot poll");
  return adapter.poller(
    { id, kind: null, metadata: null, registered: true, submittedAt: 0, ...job } as Job,
    AbortSignal.timeout(5000),
  );
}
