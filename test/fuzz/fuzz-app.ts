import type { Hono } from "hono";
import { createApp } from "../../src/app/create-app.js";
import type { FinalityConfig } from "../../src/config/config-schema.js";
import { parseConfig } from "../../src/config/load-config.js";
import type { Finality } from "../../src/engine/finality.js";
import { finalityFromConfig } from "../../src/host/node/finality-from-config.js";
import type { AppEnv } from "../../src/http/app-env.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { createRunService } from "../../src/runs/run-service.js";
import { engineOf } from "../helpers/engine.js";
import { SECRET } from "../http/helpers/webhooks.js";

export const BODY_LIMIT = 262_144;

/**
 * The app with every route (runs included) on an in-memory ledger, for app.request().
 * `apiToken`, `effects`, `bodyLimitBytes` and extra `providers` go to the configuration as given.
 */
export async function fuzzApp(
  options: {
    apiToken?: string;
    effects?: Record<string, unknown>[];
    bodyLimitBytes?: number;
    providers?: Record<string, Record<string, unknown>>;
  } = {},
): Promise<{ app: Hono<AppEnv>; finality: Finality; config: FinalityConfig; close(): Promise<void> }> {
  const config = parseConfig(
    {
      server: {
        bodyLimitBytes: options.bodyLimitBytes ?? BODY_LIMIT,
        ...(options.apiToken === undefined ? {} : { apiToken: options.apiToken }),
      },
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } }, ...options.providers },
      reconcile: { graceSeconds: 0 },
      ...(options.effects === undefined ? {} : { effects: options.effects }),
    },
    {},
    { db: ":memory:" },
  );
  const finality = await finalityFromConfig(config);
  const runs = createRunService({ finality });
  const app = createApp({
    finality,
    config,
    runs,
    receivers: createWebhookReceivers(config.providers, () => finality.clock.now()),
  });
  return { app, finality, config, close: () => finality.close() };
}

/** What the ledger holds, cheaply: every job with its version, and the number of events. */
export async function ledgerSnapshot(finality: Finality): Promise<string> {
  const jobs = (await finality.listJobs({ limit: 500 })).items;
  const parts: string[] = [];
  for (const job of jobs) {
    const events = await finality.jobEvents(job, { limit: 10_000 });
    parts.push(`${job.provider}/${job.id}@${job.version}:${job.state}:${events.length}`);
  }
  const runs = await engineOf(finality).store.listRuns({ limit: 500 });
  parts.push(`runs:${runs.items.length}`);
  for (const e of (await engineOf(finality).store.listEffects({ limit: 500 })).items)
    parts.push(`effect:${e.id}:${e.status}:${e.attempts}:${e.nextAttemptAt}`);
  return parts.sort().join("|");
}

/** Counts inputs per test, printed at the end of each file. */
export class InputCounter {
  private readonly counts = new Map<string, number>();
  private readonly statuses = new Map<number, number>();

  add(name: string, status?: number): void {
    this.counts.set(name, (this.counts.get(name) ?? 0) + 1);
    if (status !== undefined) this.statuses.set(status, (this.statuses.get(status) ?? 0) + 1);
  }

  report(title: string): string {
    const total = [...this.counts.values()].reduce((a, b) => a + b, 0);
    const lines = [...this.counts].map(([name, n]) => `  ${name}: ${n}`);
    const statuses = [...this.statuses].sort((a, b) => a[0] - b[0]).map(([s, n]) => `${s}×${n}`);
    return [
      `${title}: ${total} inputs tried`,
      ...lines,
      statuses.length ? `  answers: ${statuses.join(" ")}` : "",
    ].join("\n");
  }
}
