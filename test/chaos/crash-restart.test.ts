import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seededRandom } from "../../src/core/clock.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { tempDir } from "../helpers/temp-dir.js";
import { type Service, startService } from "../http/helpers/service.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { ChaosClient, type PlannedWebhook } from "./chaos-client.js";

const SEED = Number(process.env.FINALITY_CHAOS_SEED ?? 20260101);
const JOBS = 300;
const KILLS = 20;
const FINALS = ["succeeded", "failed", "cancelled", "expired"] as const;

describe("crash-restart chaos on the real server", () => {
  const dir = tempDir("finality-chaos-");
  const fake = new FakeProvider();
  const receiver = new EffectReceiver(SECRET);
  beforeAll(async () => {
    await fake.listen();
    await receiver.listen();
  });
  afterAll(async () => {
    await fake.close();
    await receiver.close();
    dir.cleanup();
  });

  it(`SIGKILLed ${KILLS} times under load: every acknowledged event kept, every job right, every effect applied once`, async () => {
    const random = seededRandom(SEED);
    const db = dir.file("chaos.db");
    const config = dir.file("chaos.json");
    writeFileSync(
      config,
      JSON.stringify({
        providers: {
          acme: { type: "generic", webhook: { secrets: [SECRET] }, poll: { url: `${fake.url}/jobs/{id}` } },
        },
        reconcile: { graceSeconds: 1, minIntervalSeconds: 0.2, maxIntervalSeconds: 1 },
        effects: [{ name: "notify", url: receiver.url, secret: SECRET }],
        effectDelivery: { leaseSeconds: 1, timeoutSeconds: 0.5, retrySeconds: [0.2, 0.5, 1] },
      }),
    );
    // The truth: each job ends in one terminal state at once; some of its webhooks are never
    // sent (only reconcile can find those), some are sent twice under two ids.
    const truth = new Map<string, string>();
    const client = new ChaosClient(SEED, "acme", SECRET);
    let lost = 0;
    for (let i = 0; i < JOBS; i++) {
      const id = `job-${i}`;
      const final = FINALS[Math.floor(random() * FINALS.length)]!;
      truth.set(id, final);
      fake.addJob(id, [
        { afterMs: 0, state: "running" },
        { afterMs: 0, state: final, result: { n: i } },
      ]);
      const webhooks: PlannedWebhook[] = [];
      ["running", final].forEach((state, step) => {
        if (random() < 0.15) {
          lost++;
          return;
        }
        const body = JSON.stringify({ jobId: id, state, seq: step + 1 });
        webhooks.push({ deliveryId: `msg_${id}_${step + 1}`, jobId: id, body });
        if (random() < 0.1) webhooks.push({ deliveryId: `msg_${id}_${step + 1}_again`, jobId: id, body });
      });
      client.add(id, webhooks);
    }

    const started = performance.now();
    let service: Service = await startService({ db, args: ["--config", config] });
    client.setUrl(service.url);
    let finished = false;
    const load = client.run(8, () => finished);
    const killedAt: number[] = [];
    for (let kill = 0; kill < KILLS; kill++) {
      // A random moment: after a random number of further answers from the client's point of view.
      const target = client.answers + 5 + Math.floor(random() * 40);
      await client.until(() => client.answers >= target || client.pending === 0);
      killedAt.push(client.log.acked.size);
      expect((await service.stop("SIGKILL")).signal).toBe("SIGKILL");
      service = await startService({ db, args: ["--config", config] });
      if (kill === KILLS - 1) client.final = true;
      client.setUrl(service.url);
    }
    await client.until(() => client.pending === 0);
    finished = true;
    client.notify();
    await load;
    await receiver.until(() => receiver.applied.size >= JOBS);
    expect((await service.stop("SIGTERM")).code).toBe(0);
    const seconds = (performance.now() - started) / 1000;

    // What is durable: the file itself, read after the last stop.
    const store = createSqliteStore({ path: db });
    try {
      const missing: string[] = [];
      const wrong: string[] = [];
      let events = 0;
      const keys = new Set<string>();
      for (const [id, final] of truth) {
        const job = await store.getJob({ provider: "acme", id });
        if (job?.state !== final) wrong.push(`${id}: ${job?.state} (truly ${final})`);
        const recorded = await store.jobEvents({ provider: "acme", id }, { limit: 10_000 });
        events += recorded.length;
        const ids = new Set(recorded.map((e) => e.deliveryId));
        for (const [deliveryId, jobId] of client.log.acked)
          if (jobId === id && !ids.has(deliveryId)) missing.push(deliveryId);
        const effects = (await store.listEffects({ provider: "acme", jobId: id })).items;
        for (const effect of effects) keys.add(effect.idempotencyKey);
        expect(effects.map((e) => e.status)).toEqual(["delivered"]);
      }
      const duplicates = receiver.deliveries.length - receiver.applied.size;
      console.log(
        [
          `chaos (seed ${SEED}): ${KILLS} SIGKILLs in ${seconds.toFixed(1)} s, at ${killedAt.join(", ")} acknowledged webhooks`,
          `client: ${client.log.requests} requests, ${client.log.failures} failed and retried, ${client.log.acked.size} webhooks answered 200, ${client.log.registered.size} jobs registered`,
          `webhooks never sent (left to reconcile): ${lost}`,
          `ledger: ${JOBS} jobs, ${events} events, acknowledged but missing: ${missing.length}, wrong state: ${wrong.length}`,
          `effects: ${keys.size} keys, ${receiver.applied.size} applied once each, ${duplicates} redeliveries deduplicated by the receiver`,
        ].join("\n"),
      );
      expect(missing).toEqual([]);
      expect(wrong).toEqual([]);
      expect(keys.size).toBe(JOBS);
      expect(new Set(receiver.applied.keys())).toEqual(keys);
      expect(receiver.applied.size).toBe(JOBS);
    } finally {
      await store.close();
    }
  });
});
