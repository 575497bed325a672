// The runs and worker API (the real app, its runs routes, the lease sweeper) on one store, for
// bench/runs.bench.js. Usage: node runs-server.js '{"sqlite": path}' | '{"postgres": url, "schema": name}'

import { createApp } from "../../dist/app/create-app.js";
import { configSchema } from "../../dist/config/config-schema.js";
import { createFinality } from "../../dist/engine/create-finality.js";
import { startNodeServer } from "../../dist/http/node-server.js";
import { addRunRoutes, addWorkerRoutes } from "../../dist/http/run-routes.js";
import { createWorkerAuthorizer } from "../../dist/http/worker-auth.js";
import { createLeaseSweeper } from "../../dist/runs/lease-sweeper-loop.js";
import { createRunService } from "../../dist/runs/run-service.js";
import { openPostgresStore } from "../../dist/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../dist/store/sqlite/sqlite-store.js";

const spec = JSON.parse(process.argv[2] ?? "{}");
const store = spec.postgres
  ? await openPostgresStore({ url: spec.postgres, schema: spec.schema, max: 20 })
  : createSqliteStore({ path: spec.sqlite });
const finality = createFinality({ store });
const runs = createRunService({ finality });
const config = configSchema.parse({});
const app = createApp({ finality, config });
const bodyLimitBytes = config.server.bodyLimitBytes;
addWorkerRoutes(app, {
  runs,
  bodyLimitBytes,
  authorizeWorker: createWorkerAuthorizer({}, { allowAnonymous: true }),
});
addRunRoutes(app, { runs, bodyLimitBytes });
const server = await startNodeServer(app, { host: "127.0.0.1", port: 0 });
const sweeper = createLeaseSweeper(runs);
sweeper.start();
process.stdout.write(`runs listening on ${server.url}\n`);

process.on("SIGTERM", async () => {
  runs.close();
  await server.close(1_000);
  await sweeper.stop();
  await finality.close();
  process.exit(0);
});
