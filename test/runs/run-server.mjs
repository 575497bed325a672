// A test server until `finality serve` wires the runs routes: the real app (createApp) plus the
// runs and worker routes, the lease sweeper and the outbox dispatcher, on the built package.
// Usage: node run-server.mjs <sqlite file> [<options JSON>]
// Prints "listening <url>", then "effect <name> <jobId> <trigger>" for each delivered effect.

import { createApp } from "../../dist/app/create-app.js";
import { configSchema } from "../../dist/config/config-schema.js";
import { createFinality } from "../../dist/engine/create-finality.js";
import { createDispatcher } from "../../dist/engine/dispatcher.js";
import { bodyLimit } from "../../dist/http/body-limit.js";
import { startNodeServer } from "../../dist/http/node-server.js";
import { addRunRoutes, addWorkerRoutes } from "../../dist/http/run-routes.js";
import { createWorkerAuthorizer } from "../../dist/http/worker-auth.js";
import { createWebhookReceivers } from "../../dist/providers/node-providers.js";
import { createLeaseSweeper } from "../../dist/runs/lease-sweeper-loop.js";
import { createRunService } from "../../dist/runs/run-service.js";
import { createSqliteStore } from "../../dist/store/sqlite/sqlite-store.js";

const [file, optionsText] = process.argv.slice(2);
const options = { sweepIntervalMs: 100, retryBaseMs: 50, pools: {}, ...JSON.parse(optionsText ?? "{}") };

const finality = createFinality({
  store: createSqliteStore({ path: file }),
  effects: [
    {
      name: "notify",
      handler: async (delivery) => {
        process.stdout.write(`effect ${delivery.effect} ${delivery.job.id} ${delivery.job.state}\n`);
      },
    },
  ],
});
const runs = createRunService({ finality, retry: { baseDelayMs: options.retryBaseMs } });
const config = configSchema.parse({});
const app = createApp({
  finality,
  config,
  receivers: createWebhookReceivers(config.providers, () => Date.now()),
});
const authorizeWorker = createWorkerAuthorizer(options.pools, { allowAnonymous: true });
app.use(bodyLimit(config.server.bodyLimitBytes));
addWorkerRoutes(app, { runs, authorizeWorker });
addRunRoutes(app, { runs });

const server = await startNodeServer(app, { host: "127.0.0.1", port: 0 });
const sweeper = createLeaseSweeper(runs, { intervalMs: options.sweepIntervalMs });
const dispatcher = createDispatcher(finality, { pollIntervalMs: 100 });
finality.onEffectsEnqueued(() => dispatcher.poke());
sweeper.start();
dispatcher.start();
process.stdout.write(`listening ${server.url}\n`);

process.once("SIGTERM", async () => {
  runs.close();
  await server.close();
  await sweeper.stop();
  await dispatcher.stop();
  await finality.close();
  process.exit(0);
});
