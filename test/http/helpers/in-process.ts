import type { Hono } from "hono";
import { createApp } from "../../../src/app/create-app.js";
import type { FinalityConfig } from "../../../src/config/config-schema.js";
import { parseConfig } from "../../../src/config/load-config.js";
import type { Finality } from "../../../src/engine/finality.js";
import { finalityFromConfig } from "../../../src/host/node/finality-from-config.js";
import type { AppEnv } from "../../../src/http/app-env.js";
import { createPromMetrics } from "../../../src/http/prom-metrics.js";
import type { Logger } from "../../../src/http/request-log.js";
import { createWebhookReceivers } from "../../../src/providers/node-providers.js";
import { SECRET, signWith } from "./webhooks.js";

export const ACME = { type: "generic", webhook: { secrets: [SECRET] } };

export interface InProcess {
  app: Hono<AppEnv>;
  finality: Finality;
  config: FinalityConfig;
  logged: { level: string; fields: object; message?: string | undefined }[];
  close(): Promise<void>;
}

/** The app on an in-memory SQLite ledger, called with app.request(): no port, no process. */
export async function inProcessApp(
  raw: Record<string, unknown> = { providers: { acme: ACME } },
): Promise<InProcess> {
  const config = parseConfig(raw, {}, { db: ":memory:" });
  const finality = await finalityFromConfig(config);
  const logged: InProcess["logged"] = [];
  const logger: Logger = {
    info: (fields, message) => logged.push({ level: "info", fields, message }),
    warn: (fields, message) => logged.push({ level: "warn", fields, message }),
    error: (fields, message) => logged.push({ level: "error", fields, message }),
  };
  const metrics = createPromMetrics({
    stats: () => finality.store.stats(finality.clock.now()),
    processMetrics: false,
  });
  const app = createApp({
    finality,
    config,
    metrics,
    logger,
    receivers: createWebhookReceivers(config.providers, () => finality.clock.now()),
  });
  return { app, finality, config, logged, close: () => finality.close() };
}

/** A webhook request for app.request(), signed with SECRET by the official package. */
export function webhookInit(
  body: string,
  headers: Record<string, string> = signWith(SECRET, body),
): RequestInit {
  return { method: "POST", headers, body };
}
