import { writeFileSync } from "node:fs";
import { connect } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningService, serve } from "../../src/host/node/serve.js";
import { readySchema } from "../../src/http/api-schemas.js";
import { type BrokerServer, startNatsServer } from "../helpers/broker-servers.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";

// `finality serve` with a NATS effect whose server is down at the start: webhooks are taken all
// the same, /readyz stays ready and says the destination is not connected, and when the server
// comes up the waiting effects go out (awaited on a JetStream consumer, not by polling).

const STREAM = "FINALITY_SERVE";
const SUBJECT = "finality.serve.settled";
let dir: TempDir;
let nats: BrokerServer;
let service: RunningService;

beforeAll(async () => {
  dir = tempDir("finality-broker-serve-");
  nats = await startNatsServer(dir.file("nats"), { start: false });
  const file = dir.file("finality.json");
  writeFileSync(
    file,
    JSON.stringify({
      server: { host: "127.0.0.1", port: 0 },
      store: { sqlite: dir.file("ledger.db") },
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      effects: [{ name: "bus", nats: { servers: nats.url, subject: SUBJECT, stream: STREAM } }],
      effectDelivery: { retrySeconds: [0.2], pollIntervalSeconds: 0.1 },
      log: { level: "silent" },
    }),
  );
  service = await serve({ configFile: file, flags: {}, env: {} });
}, 60_000);
afterAll(async () => {
  await service?.stop();
  await nats?.kill();
  dir?.cleanup();
});

async function settleByWebhook(id: string): Promise<number> {
  const body = JSON.stringify({ jobId: id, state: "succeeded" });
  const response = await fetch(`${service.url}/webhooks/acme`, {
    method: "POST",
    headers: { "content-type": "application/json", ...signWith(SECRET, body) },
    body,
  });
  await response.arrayBuffer();
  return response.status;
}

describe("a broker effect under finality serve", () => {
  it("takes webhooks while the broker is down, reports it on /readyz, and delivers once it is back", async () => {
    for (let i = 0; i < 10; i++) expect(await settleByWebhook(`job-${i}`)).toBe(200);
    const before = await fetch(`${service.url}/readyz`);
    expect(before.status).toBe(200);
    // The answer is what /openapi.json describes (readySchema is the document's source).
    const readiness = readySchema.parse(await before.json());
    expect(readiness.destinations).toMatchObject([{ effect: "bus", destination: "nats", connected: false }]);

    await nats.start();
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await nc.jetstreamManager();
      // Made here first so the consumer can wait on it; Finality uses a stream that exists.
      await jsm.streams.add({ name: STREAM, subjects: [SUBJECT] });
      const consumer = await nc.jetstream().consumers.get(STREAM);
      const ids = new Set<string>();
      const messages = await consumer.consume();
      for await (const message of messages) {
        ids.add(message.headers?.get("Nats-Msg-Id") ?? "");
        if (ids.size === 10) break;
      }
      expect(ids.size).toBe(10);
    } finally {
      await nc.close();
    }
    const after = (await (await fetch(`${service.url}/readyz`)).json()) as {
      destinations: { connected: boolean }[];
    };
    expect(after.destinations).toMatchObject([{ connected: true }]);
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).toContain('finality_effect_destination_connected{effect="bus",destination="nats"} 1');
    // Counted just after the ack that the consumer may already have seen: at least one by now.
    expect(metrics).toMatch(
      /finality_effect_destination_attempts_total\{destination="nats",outcome="delivered"\} [1-9]/,
    );
  }, 120_000);
});
