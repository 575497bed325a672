// (d) The PostgreSQL peer a team would reach for: node:http, the official standardwebhooks
// verify, and one pg-boss `send` per webhook, keyed by the delivery id (`singletonKey`), so a
// redelivery is not queued twice while the first is queued. It answers 200 after pg-boss's insert
// commits. No job state, no ordering, no audit trail, no effects: a queue of raw events.
//
// Usage: node pgboss-webhook-server.js <postgres url> <schema> <secret> [pool size]
import { createServer } from "node:http";
import PgBoss from "pg-boss";
import { Webhook } from "standardwebhooks";

const [url, schema, secret, max = "10"] = process.argv.slice(2);
const boss = new PgBoss({
  connectionString: url,
  schema,
  max: Number(max),
  supervise: false,
  schedule: false,
});
boss.on("error", (error) => process.stderr.write(`pg-boss error: ${error.message}\n`));
await boss.start();
await boss.createQueue("webhooks");
const webhook = new Webhook(secret);

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let event;
    try {
      event = webhook.verify(body, request.headers);
    } catch {
      response.writeHead(401).end();
      return;
    }
    boss.send("webhooks", event, { singletonKey: request.headers["webhook-id"] }).then(
      () => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end('{"ok":true}');
      },
      (error) => {
        process.stderr.write(`send failed: ${error.message}\n`);
        response.writeHead(503).end();
      },
    );
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`pg-boss peer listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on("SIGTERM", () =>
  server.close(async () => {
    await boss.stop({ graceful: false, wait: true });
    process.exit(0);
  }),
);
