/**
 * Effects per second to each broker through Finality's outbox (settled jobs → outbox rows →
 * dispatcher at concurrency 50 → publish and wait for the ack / confirm / reply, then mark the
 * row delivered), beside a bare client publishing the same messages with no outbox (the same
 * body, the same idempotency key header or field, concurrency 50, waiting for each ack), in the
 * same run, interleaved rounds. Against the machine's servers: NATS JetStream 127.0.0.1:4222,
 * RabbitMQ 127.0.0.1:5672 (guest/guest), Redis 127.0.0.1:6379; a broker that is not up is SKIPPED.
 * Unique stream, queue and key names; removed at the end.
 *
 * Knobs: BENCH_BROKER_EFFECTS (default 3000), BENCH_ROUNDS (default 3), BENCH_BROKERS (nats,amqp,redis).
 */
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as amqpConnect } from "amqplib";
import { Redis } from "ioredis";
import { connect as natsConnect, headers as natsHeaders } from "nats";
import {
  createAmqpEffectTarget,
  createNatsEffectTarget,
  createRedisEffectTarget,
} from "../dist/exports/brokers.js";
import { createFinality } from "../dist/exports/sqlite.js";
import { createDispatcher } from "../dist/index.js";
import { fmt } from "./lib/stats.js";

const COUNT = Number(process.env.BENCH_BROKER_EFFECTS ?? 3000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const WANTED = (process.env.BENCH_BROKERS ?? "nats,amqp,redis").split(",");
const CONCURRENCY = 50;
const run = randomUUID().slice(0, 8);
const dir = mkdtempSync(join(tmpdir(), "finality-bench-brokers-"));

// A settled job's body as a URL effect POSTs it (the size a broker message has).
const sampleBody = (i) =>
  JSON.stringify({
    type: "job.settled",
    effect: "bench",
    idempotencyKey: `fin_bench_${run}_${i}`,
    attempt: 1,
    job: {
      provider: "acme",
      id: `job-${i}`,
      kind: null,
      state: "succeeded",
      version: 2,
      settledBy: "webhook",
    },
  });

const BROKERS = {
  nats: {
    destination: (round) => ({
      nats: {
        servers: ["nats://127.0.0.1:4222"],
        subject: `bench.${run}.r${round}`,
        stream: `BENCH_${run}_R${round}`,
      },
    }),
    target: () => createNatsEffectTarget(),
    async bare(round) {
      const nc = await natsConnect({ servers: "nats://127.0.0.1:4222" });
      const subject = `bench.${run}.bare${round}`;
      const jsm = await nc.jetstreamManager();
      await jsm.streams.add({ name: `BENCH_${run}_BARE${round}`, subjects: [subject] });
      const js = nc.jetstream();
      const time = await pool(async (i) => {
        const h = natsHeaders();
        h.set("content-type", "application/json");
        await js.publish(subject, new TextEncoder().encode(sampleBody(i)), {
          msgID: `fin_bare_${round}_${i}`,
          headers: h,
        });
      });
      await nc.close();
      return time;
    },
    async cleanup() {
      const nc = await natsConnect({ servers: "nats://127.0.0.1:4222" });
      const jsm = await nc.jetstreamManager();
      for await (const name of jsm.streams.names()) if (name.includes(run)) await jsm.streams.delete(name);
      await nc.close();
    },
    async up() {
      const nc = await natsConnect({ servers: "nats://127.0.0.1:4222", timeout: 2000 });
      await (await nc.jetstreamManager()).getAccountInfo();
      await nc.close();
    },
  },
  amqp: {
    destination: (round) => {
      const queue = `bench-${run}-r${round}`;
      return { amqp: { url: "amqp://guest:guest@127.0.0.1:5672", exchange: "", routingKey: queue, queue } };
    },
    target: () => createAmqpEffectTarget(),
    async bare(round) {
      const connection = await amqpConnect("amqp://guest:guest@127.0.0.1:5672");
      const channel = await connection.createConfirmChannel();
      const queue = `bench-${run}-bare${round}`;
      await channel.assertQueue(queue, { durable: true });
      const time = await pool(
        (i) =>
          new Promise((resolve, reject) =>
            channel.publish(
              "",
              queue,
              Buffer.from(sampleBody(i)),
              {
                persistent: true,
                mandatory: true,
                messageId: `fin_bare_${round}_${i}`,
                contentType: "application/json",
              },
              (error) => (error ? reject(error) : resolve()),
            ),
          ),
      );
      await connection.close();
      return time;
    },
    async cleanup() {
      const connection = await amqpConnect("amqp://guest:guest@127.0.0.1:5672");
      const channel = await connection.createChannel();
      for (let round = 0; round < ROUNDS; round++) {
        await channel.deleteQueue(`bench-${run}-r${round}`);
        await channel.deleteQueue(`bench-${run}-bare${round}`);
      }
      await connection.close();
    },
    async up() {
      const connection = await amqpConnect("amqp://guest:guest@127.0.0.1:5672", { timeout: 2000 });
      await connection.close();
    },
  },
  redis: {
    destination: (round) => ({ redis: { url: "redis://127.0.0.1:6379", stream: `bench-${run}-r${round}` } }),
    target: () => createRedisEffectTarget(),
    async bare(round) {
      const redis = new Redis("redis://127.0.0.1:6379");
      const stream = `bench-${run}-bare${round}`;
      const time = await pool((i) =>
        redis.xadd(
          stream,
          "*",
          "idempotencyKey",
          `fin_bare_${round}_${i}`,
          "contentType",
          "application/json",
          "body",
          sampleBody(i),
        ),
      );
      redis.disconnect();
      return time;
    },
    async cleanup() {
      const redis = new Redis("redis://127.0.0.1:6379");
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", `bench-${run}-*`, "COUNT", 1000);
        if (keys.length > 0) await redis.del(...keys);
        cursor = next;
      } while (cursor !== "0");
      redis.disconnect();
    },
    async up() {
      const redis = new Redis("redis://127.0.0.1:6379", {
        lazyConnect: true,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      });
      await redis.connect();
      redis.disconnect();
    },
  },
};

/** Runs `publish(i)` for i < COUNT, CONCURRENCY at a time; the seconds it took. */
async function pool(publish) {
  let next = 0;
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < COUNT) await publish(next++);
    }),
  );
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function throughOutbox(broker, round) {
  const finality = createFinality({
    store: { sqlite: join(dir, `${broker.name}-${round}.db`), synchronous: "NORMAL" },
    effects: [{ name: "bench", ...broker.destination(round) }],
  });
  const settles = [];
  for (let i = 0; i < COUNT; i++)
    settles.push(
      finality.ingest({ provider: "acme", id: `job-${i}`, state: "succeeded", source: "webhook" }),
    );
  await Promise.all(settles);
  const target = broker.target();
  const dispatcher = createDispatcher(finality, {
    concurrency: CONCURRENCY,
    targets: { [broker.name]: target },
  });
  // The first connection (and NATS's stream creation) is not part of the rate.
  await dispatcher.runOnce({ limit: 1 });
  const started = process.hrtime.bigint();
  let delivered = 1;
  for (;;) {
    const claimed = await dispatcher.runOnce();
    delivered += claimed;
    if (claimed === 0) break;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const stats = await finality.store.stats(Date.now());
  await target.close();
  await finality.close();
  if ((stats.effectsByStatus.delivered ?? 0) !== COUNT)
    throw new Error(`${broker.name}: ${stats.effectsByStatus.delivered} of ${COUNT} delivered`);
  return (delivered - 1) / seconds;
}

console.log(
  `brokers: ${COUNT} effects per round, ${ROUNDS} rounds, concurrency ${CONCURRENCY}, SQLite NORMAL`,
);
for (const name of WANTED) {
  const broker = { name, ...BROKERS[name] };
  try {
    await broker.up();
  } catch (error) {
    console.log(`${name}: SKIPPED (${error.message})`);
    continue;
  }
  const bare = [];
  const outbox = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      bare.push(COUNT / (await broker.bare(round)));
      outbox.push(await throughOutbox(broker, round));
    }
  } finally {
    await broker.cleanup().catch((error) => console.log(`${name}: cleanup failed: ${error.message}`));
  }
  const best = (xs) => Math.max(...xs);
  console.log(
    `${name.padEnd(5)} bare client ${fmt(best(bare), 0).padStart(8)} msg/s | finality outbox ${fmt(best(outbox), 0).padStart(8)} effects/s | ratio ${fmt(best(outbox) / best(bare), 2)}`,
  );
}
rmSync(dir, { recursive: true, force: true });
