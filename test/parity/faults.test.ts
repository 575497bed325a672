import { afterAll, describe, expect, it } from "vitest";
import { type Notification, sendNotification } from "../../src/testing/fake-provider.js";
import { adminClient } from "../helpers/postgres.js";
import { EffectReceiver } from "../helpers/receiver.js";
import type { Service } from "../http/helpers/service.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { timelineNotifications, withDuplicatesShuffled } from "../service/load-client.js";
import { postgresDeployment, workersDeployment } from "./deployments.js";
import { deliveriesFor, inLanes, json, SCALE } from "./scenario.js";
import { FAULT_SCENARIOS } from "./scenario-list.js";

// Faults per deployment (issue 32): the same black-box checks as the scenarios, with a replica
// SIGKILLed, SIGSTOPped or cut off from PostgreSQL, and workerd restarted on its storage.

const terminalOf = (i: number) => (i % 4 === 0 ? "failed" : "succeeded");
const config = (receiver: EffectReceiver) => ({
  providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
  effects: [{ name: "notify", url: receiver.url, secret: SECRET, providers: ["acme"] }],
  effectDelivery: { leaseSeconds: 2, timeoutSeconds: 1, retrySeconds: [0.2, 0.5, 1] },
  log: { level: "error" },
});
const jobsFrom = (from: number, to: number) =>
  Array.from({ length: to - from }, (_, i) =>
    timelineNotifications(`job-${from + i}`, terminalOf(from + i)),
  ).flat();

/** Sends until 200 over whichever of `urls()` is next, a short pause after a 5xx or a refused connection. */
async function deliver(
  urls: () => string[],
  notification: Notification,
  deadlineMs = 20_000,
): Promise<number> {
  const started = performance.now();
  for (let turn = 0; ; turn++) {
    const live = urls();
    const status = await sendNotification(`${live[turn % live.length]}/webhooks/acme`, SECRET, notification);
    if (status === 200) return performance.now() - started;
    if (status !== 0 && status < 500) throw new Error(`webhook answered ${status}`);
    if (performance.now() - started > deadlineMs)
      throw new Error(`${notification.webhookId} refused for ${deadlineMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe(`${FAULT_SCENARIOS.postgres}: faults on three PostgreSQL replicas`, { timeout: 120_000 }, () => {
  const deployment = postgresDeployment();
  const receiver = new EffectReceiver(SECRET);
  afterAll(async () => {
    await deployment.cleanup();
    await receiver.close();
  });

  it("one replica SIGKILLed, one SIGSTOPped, one cut from the database: every acknowledged webhook recorded, every job right, each effect key once, unrelated webhooks answered in bounded time", async () => {
    await receiver.listen();
    const running = await deployment.start({
      ...config(receiver),
      // The bound asked of healthy replicas (2 s) sits well below both: a wait for the frozen
      // replica's locks would show as a miss, not hide behind the server ending its session.
      store: { lockTimeoutSeconds: 5, idleInTransactionTimeoutSeconds: 10 },
    });
    const [killed, frozen, cut] = running.faults.replicas as [Service, Service, Service];
    const names = running.faults.postgres?.applicationNames as string[];
    const jobs = 40 * SCALE;
    const live = new Set([killed, frozen, cut]);
    const urls = () => [...live].map((r) => r.url);
    const load = withDuplicatesShuffled(jobsFrom(0, jobs), jobs * 4, 5);
    const half = Math.floor(load.length / 2);
    await inLanes(load.slice(0, half), 8, (n) => deliver(urls, n));

    killed.child.kill("SIGKILL");
    live.delete(killed);
    frozen.child.kill("SIGSTOP");
    live.delete(frozen);
    const admin = adminClient();
    try {
      await admin.unsafe(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
        [names[2] as string],
      );
    } finally {
      await admin.end({ timeout: 5 });
    }
    // While one is dead and one frozen: the rest of the load, and unrelated jobs timed.
    const took = await inLanes([...load.slice(half), ...jobsFrom(jobs, jobs + 10)], 8, (n) =>
      deliver(urls, n),
    );
    const unrelated = took.slice(load.length - half);
    expect(Math.max(...unrelated)).toBeLessThan(2000);
    frozen.child.kill("SIGCONT");
    live.add(frozen);

    for (let i = 0; i < jobs + 10; i++) {
      const { body } = await json(running, `/v1/jobs/acme/job-${i}`);
      expect(body.state, `job-${i}`).toBe(terminalOf(i));
    }
    await receiver.until(() => receiver.applied.size >= jobs + 10);
    // At least once: a delivery in flight on the killed replica may be sent again, same key.
    expect(new Set(deliveriesFor(receiver, ["acme"]).map((d) => d.key)).size).toBe(jobs + 10);
    await running.stop();
  });
});

describe(`${FAULT_SCENARIOS.workers}: workerd restarted under a 4-shard Worker`, { timeout: 120_000 }, () => {
  const deployment = workersDeployment();
  const receiver = new EffectReceiver(SECRET);
  afterAll(async () => {
    await deployment.cleanup();
    await receiver.close();
  });

  it("what was acknowledged before the restart is kept; redeliveries after it are duplicates; effects once", async () => {
    await receiver.listen();
    const running = await deployment.start(config(receiver));
    const jobs = 12 * SCALE;
    const load = jobsFrom(0, jobs);
    const before = load.filter((n) => !n.webhookId.endsWith("_3"));
    await inLanes(before, 8, (n) => deliver(() => running.urls, n));
    const events = async (i: number) =>
      (
        await json<{ items: { deliveryId: string | null; applied: boolean; reason: string | null }[] }>(
          running,
          `/v1/jobs/acme/job-${i}/events`,
        )
      ).body.items;
    const kept = await Promise.all(Array.from({ length: jobs }, (_, i) => events(i)));
    await running.faults.restart?.();
    // Everything again: redeliveries of what was acknowledged, and the terminal ones.
    await inLanes(load, 8, (n) => deliver(() => running.urls, n));
    for (let i = 0; i < jobs; i++) {
      const { body } = await json(running, `/v1/jobs/acme/job-${i}`);
      expect(body.state, `job-${i}`).toBe(terminalOf(i));
      // The trail from before the restart, then the redeliveries refused as duplicates (their ids
      // kept across the restart) and the terminal delivery applied.
      const after = await events(i);
      expect(after.slice(0, kept[i]?.length)).toEqual(kept[i]);
      const added = after.slice(kept[i]?.length);
      expect(added.filter((e) => e.applied).map((e) => e.deliveryId)).toEqual([`msg_job-${i}_3`]);
      expect(added.filter((e) => !e.applied).map((e) => e.reason)).toEqual([
        "duplicate-delivery",
        "duplicate-delivery",
      ]);
    }
    await receiver.until(() => receiver.applied.size >= jobs);
    expect(deliveriesFor(receiver, ["acme"])).toHaveLength(jobs);
    await running.stop();
  });
});
