import { type CloudEvent, HTTP } from "cloudevents";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisEffectTarget } from "../../src/engine/brokers/redis-effect-target.js";
import { DeliveryError } from "../../src/engine/delivery-error.js";
import type { EffectDefinition } from "../../src/engine/effect-definitions.js";
import type { EffectTarget } from "../../src/engine/effect-target.js";
import { type BrokerServer, startRedisServer } from "../helpers/broker-servers.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { brokerRun, OVERSIZED } from "./broker-harness.js";

// Against a private redis-server (its own port; an fsync-always AOF so the stream outlives a
// SIGKILL), so the test can kill it, or its clients (CLIENT KILL), mid-run.

let server: BrokerServer;
let data: TempDir;
let streams = 0;

beforeAll(async () => {
  data = tempDir("finality-redis-");
  server = await startRedisServer(data.path);
}, 60_000);
afterAll(async () => {
  await server?.kill();
  data?.cleanup();
});

function redisEffect(extra: Partial<EffectDefinition> = {}): EffectDefinition {
  streams += 1;
  return { name: "s", redis: { url: server.url, stream: `finality-t${streams}` }, ...extra };
}

/** A short-lived client of the test's own: the entries of a stream as field maps. */
async function withRedis<T>(work: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = new Redis(server.url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    return await work(redis);
  } finally {
    redis.disconnect();
  }
}

async function entries(stream: string): Promise<Record<string, string>[]> {
  const raw = await withRedis((redis) => redis.xrange(stream, "-", "+"));
  return raw.map(([, fields]) => {
    const out: Record<string, string> = {};
    for (let i = 0; i < fields.length; i += 2) out[fields[i] as string] = fields[i + 1] as string;
    return out;
  });
}

describe("Redis Streams effects", () => {
  it("appends every settled job once per key across a SIGKILL and restart of the server mid-run", async () => {
    const definition = redisEffect();
    const run = brokerRun(definition, createRedisEffectTarget({ minBackoffMs: 20, maxBackoffMs: 200 }));
    try {
      await run.settle("a", 30);
      await run.delivered(10);
      await server.kill("SIGKILL");
      await run.settle("b", 30);
      await run.failures(1);
      await server.start();
      await run.delivered(60);
      const appended = await entries(definition.redis?.stream ?? "");
      expect(appended.map((e) => e.idempotencyKey).sort()).toEqual(await run.keys());
      expect(JSON.parse(appended[0]?.body ?? "{}")).toMatchObject({ type: "job.settled", effect: "s" });
    } finally {
      await run.close();
    }
  }, 120_000);

  it("appends once per key when its connection is killed server-side (CLIENT KILL) mid-run", async () => {
    const definition = redisEffect();
    const run = brokerRun(definition, createRedisEffectTarget({ minBackoffMs: 20, maxBackoffMs: 200 }));
    try {
      await run.settle("a", 20);
      await run.delivered(5);
      const killed = await withRedis(
        (redis) => redis.call("CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes") as Promise<number>,
      );
      expect(killed).toBeGreaterThanOrEqual(1);
      await run.settle("b", 20);
      await run.delivered(40);
      const appended = await entries(definition.redis?.stream ?? "");
      expect(appended.map((e) => e.idempotencyKey).sort()).toEqual(await run.keys());
    } finally {
      await run.close();
    }
  }, 120_000);

  it("appends once when a retry follows a lost reply (the Lua guard)", async () => {
    const definition = redisEffect();
    const redis = createRedisEffectTarget();
    let lost = 0;
    const losingReplies: EffectTarget = {
      kind: "redis",
      async deliver(d, delivery, signal) {
        await redis.deliver(d, delivery, signal);
        if (delivery.attempt === 1) {
          lost += 1;
          throw new DeliveryError("reply lost");
        }
      },
      close: () => redis.close?.() ?? Promise.resolve(),
    };
    const run = brokerRun(definition, losingReplies);
    try {
      await run.settle("lost", 5);
      await run.delivered(5);
      expect(lost).toBe(5);
      const appended = await entries(definition.redis?.stream ?? "");
      expect(appended.map((e) => e.idempotencyKey).sort()).toEqual(await run.keys());
      // The entry is the first attempt's: the retry appended nothing.
      expect(appended.every((e) => e.attempt === "1")).toBe(true);
    } finally {
      await run.close();
    }
  }, 60_000);

  it("carries CloudEvents the cloudevents SDK parses, structured (body) and binary (ce- fields)", async () => {
    for (const mode of ["structured", "binary"] as const) {
      const definition = redisEffect({
        format: "cloudevents",
        cloudevents: { mode, source: "finality://test" },
      });
      const run = brokerRun(definition, createRedisEffectTarget());
      try {
        await run.settle(`ce-${mode}`, 1);
        await run.delivered(1);
        const [entry] = await entries(definition.redis?.stream ?? "");
        if (!entry) throw new Error("no entry");
        const { body, contentType, ...rest } = entry;
        const headers: Record<string, string> = { "content-type": contentType ?? "" };
        for (const [field, value] of Object.entries(rest))
          if (field.startsWith("ce-")) headers[field] = value;
        const event = HTTP.toEvent({ headers, body }) as CloudEvent<{ job: { id: string } }>;
        expect(event.validate()).toBe(true);
        expect(event).toMatchObject({
          id: entry.idempotencyKey,
          source: "finality://test",
          type: "finality.job.succeeded",
          subject: `acme/ce-${mode}-0`,
        });
        expect(event.data?.job.id).toBe(`ce-${mode}-0`);
      } finally {
        await run.close();
      }
    }
  }, 60_000);

  it("appends a job at the ledger's limits whole under the default proto-max-bulk-len (512 MB)", async () => {
    const definition = redisEffect();
    const run = brokerRun(definition, createRedisEffectTarget());
    try {
      await run.settleOversized("whole");
      expect((await run.firstOutcome()).outcome).toBe("delivered");
      const [entry] = await entries(definition.redis?.stream ?? "");
      expect(entry?.truncated).toBeUndefined();
      const { job } = JSON.parse(entry?.body ?? "{}");
      expect(job).toMatchObject({ ...OVERSIZED });
    } finally {
      await run.close();
    }
  }, 60_000);

  it("fits the body to a server whose proto-max-bulk-len is lower, cutting and marking what did not fit", async () => {
    // 1 MB is the least Redis allows; the job encodes to ~1.1 MB, which the server refuses
    // ("invalid bulk length") on every retry.
    const limit = 1024 * 1024;
    await withRedis((redis) => redis.config("SET", "proto-max-bulk-len", String(limit)));
    const definition = redisEffect();
    const run = brokerRun(definition, createRedisEffectTarget());
    try {
      await run.settleOversized("big");
      const first = await run.firstOutcome();
      expect(first.error).toBeUndefined();
      expect(first.outcome).toBe("delivered");
      const [entry] = await entries(definition.redis?.stream ?? "");
      if (!entry) throw new Error("no entry");
      expect(new TextEncoder().encode(entry.body).length).toBeLessThan(limit);
      const cut = entry.truncated?.split(",") ?? [];
      expect(cut).toHaveLength(1);
      const { job } = JSON.parse(entry.body ?? "{}");
      for (const field of ["result", "error"] as const)
        if (cut.includes(field))
          expect(job[field]).toMatchObject({
            truncated: true,
            reason: "message-too-large",
            limitBytes: limit,
          });
        else expect(job[field]).toEqual(OVERSIZED[field]);
    } finally {
      await run.close();
      await withRedis((redis) => redis.config("SET", "proto-max-bulk-len", String(512 * 1024 * 1024)));
    }
  }, 60_000);
});
