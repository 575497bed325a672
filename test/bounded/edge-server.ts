import { createApp } from "../../src/app/create-app.js";
import { type FinalityConfig, headersTimeoutOf } from "../../src/config/config-schema.js";
import { parseConfig } from "../../src/config/load-config.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { engineOf, type FinalityEngine } from "../../src/engine/finality-engine.js";
import { ledgerOptionsFromConfig } from "../../src/host/from-config.js";
import { type NodeServer, startNodeServer } from "../../src/http/node-server.js";
import { createNodeWebhookHandler } from "../../src/http/node-webhook-handler.js";
import { silentLogger } from "../../src/http/request-log.js";
import { noopMetrics } from "../../src/http/service-metrics.js";
import { createWebhookIntake } from "../../src/http/webhook-intake.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { ACME } from "../http/helpers/in-process.js";

/**
 * The Node edge as `serve` wires it (the app, the webhook fast path, the real node:http server)
 * on a SQLite file, with the ledger at hand so that a test can watch its reads. The settlement
 * feed's fallback poll is an hour: a long poll or stream here is woken by a commit or not at all.
 */
export async function startEdge(
  file: string,
  server: Record<string, unknown> = {},
): Promise<{ url: string; finality: FinalityEngine; config: FinalityConfig; close(): Promise<void> }> {
  const config = parseConfig({ providers: { acme: ACME }, server: { port: 0, ...server } }, {}, { db: file });
  const store = createSqliteStore({ path: file, synchronous: "NORMAL", settlementPollMs: 3_600_000 });
  const finality = engineOf(createFinality({ store, ...ledgerOptionsFromConfig(config) }));
  const receivers = createWebhookReceivers(config.providers, () => finality.clock.now());
  const intake = createWebhookIntake({ finality, receivers, metrics: noopMetrics });
  const shutdown = new AbortController();
  const app = createApp({ finality, config, intake, shutdown: shutdown.signal });
  const fastPath = createNodeWebhookHandler({
    intake,
    bodyLimitBytes: config.server.bodyLimitBytes,
    bodyBytesInFlight: config.server.bodyBytesInFlight,
    logger: silentLogger,
    metrics: noopMetrics,
  });
  const http: NodeServer = await startNodeServer(app, {
    host: "127.0.0.1",
    port: 0,
    fastPath,
    keepAliveTimeoutMs: config.server.keepAliveTimeoutMs,
    headersTimeoutMs: headersTimeoutOf(config.server),
  });
  return {
    url: http.url,
    finality,
    config,
    async close() {
      shutdown.abort();
      await http.close(2000);
      await finality.close();
    },
  };
}
