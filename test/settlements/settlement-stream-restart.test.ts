import { afterAll, describe, expect, it } from "vitest";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  requirePostgres,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp-dir.js";
import type { Service } from "../http/helpers/service.js";
import { SECRET, serveWith } from "../service/service-helpers.js";
import { checkExactlyOnce, settleByWebhook, streamConsumer } from "./stream-consumer.js";

// A settlement stream client that reconnects with its last cursor (Last-Event-ID) misses nothing
// and sees nothing twice: across a SIGKILL of `finality serve` (real child processes, the built
// dist/), and on PostgreSQL with the settlements sent to one replica and streamed from another.

const PROVIDERS = { acme: { type: "generic", webhook: { secrets: [SECRET] } } };
const ids = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `job-${from + i}`);
const ALL = ids(0, 120);

async function feedOrder(url: string): Promise<string[]> {
  const response = await fetch(`${url}/v1/settlements?limit=1000`);
  const body = (await response.json()) as { items: { cursor: string; id: string }[] };
  expect(new Set(body.items.map((s) => s.id)).size).toBe(body.items.length);
  return body.items.map((s) => s.cursor);
}

describe("settlement stream across a restart", () => {
  const dir = tempDir("finality-stream-");
  const services: Service[] = [];
  const sql = adminClient();
  const schemas: string[] = [];
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop("SIGKILL")));
    for (const schema of schemas) await dropSchema(sql, schema);
    await sql.end();
    dir.cleanup();
  });
  const serve = async (db: string | undefined, config: unknown, name: string) => {
    const service = await serveWith(dir, db, config, name);
    services.push(service);
    return service;
  };

  it("SQLite: the server is SIGKILLed mid-stream; the client resumes from its cursor on the restarted one", async () => {
    const db = dir.file("ledger.db");
    const config = { providers: PROVIDERS };
    let service = await serve(db, config, "sqlite-1.json");
    const consumer = streamConsumer();
    await consumer.connect(service.url);
    expect(await settleByWebhook(() => service.url, ids(0, 40))).toEqual([]);

    const sending = settleByWebhook(() => service.url, ids(40, 80));
    await consumer.until(() => consumer.received.length >= 50);
    await service.stop("SIGKILL");
    const unacknowledged = await sending;
    await consumer.ended();

    service = await serve(db, config, "sqlite-2.json");
    await consumer.connect(service.url);
    expect(await settleByWebhook(() => service.url, [...unacknowledged, ...ids(80, 120)])).toEqual([]);
    await consumer.until(() => new Set(consumer.received.map((r) => r.id)).size >= ALL.length);
    expect(consumer.connections()).toBe(2);
    const order = await feedOrder(service.url);
    expect(checkExactlyOnce(consumer.received, ALL, order)).toEqual({
      duplicates: [],
      missing: [],
      inFeedOrder: true,
    });
    // A graceful stop ends the open stream (the client would reconnect elsewhere) and exits cleanly.
    expect(await service.stop("SIGTERM")).toEqual({ code: 0, signal: null });
    await consumer.ended();
  }, 180_000);

  it("PostgreSQL: settled on replica A, streamed from replica B, B SIGKILLed and restarted mid-stream", async () => {
    await requirePostgres("settlement stream across PostgreSQL replicas");
    const schema = uniqueSchemaName("finality_stream_replicas");
    schemas.push(schema);
    const config = { providers: PROVIDERS, store: { postgres: POSTGRES_TEST_URL, schema } };
    const a = await serve(undefined, config, `${schema}-a.json`);
    let b = await serve(undefined, config, `${schema}-b.json`);
    const consumer = streamConsumer();
    await consumer.connect(b.url);
    // Every webhook goes to A only: B's client learns of them through the database.
    const sending = settleByWebhook(() => a.url, ALL, 6);
    await consumer.until(() => consumer.received.length >= 40);
    await b.stop("SIGKILL");
    await consumer.ended();
    b = await serve(undefined, config, `${schema}-b2.json`);
    await consumer.connect(b.url);
    expect(await sending).toEqual([]);
    await consumer.until(() => new Set(consumer.received.map((r) => r.id)).size >= ALL.length);
    expect(consumer.connections()).toBe(2);
    const order = await feedOrder(b.url);
    expect(await feedOrder(a.url)).toEqual(order);
    expect(checkExactlyOnce(consumer.received, ALL, order)).toEqual({
      duplicates: [],
      missing: [],
      inFeedOrder: true,
    });
    await consumer.close();
    await Promise.all([a.stop("SIGTERM"), b.stop("SIGTERM")]);
  }, 180_000);
});
