import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeProvider, plannedNotifications, sendNotification } from "../../src/testing/fake-provider.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { tempDir } from "../helpers/temp-dir.js";
import { allJobs, registerJob, SECRET, serveWith } from "./service-helpers.js";

const JOBS = 200;
const GRACE_SECONDS = 2;
const MAX_INTERVAL_SECONDS = 1;

describe("the deploy gap", () => {
  const dir = tempDir();
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

  it("settles every job whose webhooks were lost while the service was down, through reconcile, with effects once each", async () => {
    const db = dir.file("ledger.db");
    const config = {
      providers: {
        acme: { type: "generic", webhook: { secrets: [SECRET] }, poll: { url: `${fake.url}/jobs/{id}` } },
      },
      reconcile: {
        graceSeconds: GRACE_SECONDS,
        minIntervalSeconds: 0.2,
        maxIntervalSeconds: MAX_INTERVAL_SECONDS,
      },
      effects: [{ name: "notify", url: receiver.url, secret: SECRET, on: ["succeeded", "failed"] }],
    };
    const first = await serveWith(dir, db, config);
    for (let i = 0; i < JOBS; i++) {
      fake.addJob(`job-${i}`, [
        { afterMs: 0, state: "running" },
        { afterMs: 0, state: i % 10 === 0 ? "failed" : "succeeded", result: { n: i } },
      ]);
      await registerJob(first.url, "acme", `job-${i}`);
    }
    // Deploy: the service goes away before any job's grace period is over.
    expect((await first.stop("SIGTERM")).code).toBe(0);
    const lost = await Promise.all(
      plannedNotifications(fake).map((n) => sendNotification(`${first.url}/webhooks/acme`, SECRET, n)),
    );
    expect(lost.every((status) => status === 0)).toBe(true);

    const second = await serveWith(dir, db, config);
    const restartedAt = Date.now();
    await receiver.until(() => receiver.applied.size === JOBS);
    const elapsedSeconds = (Date.now() - restartedAt) / 1000;
    // Every job's grace had passed by the restart, so one backoff step (plus the polls' own time) bounds it.
    expect(elapsedSeconds).toBeLessThan(GRACE_SECONDS + MAX_INTERVAL_SECONDS + 5);

    const jobs = await allJobs(second.url, "acme");
    expect(jobs).toHaveLength(JOBS);
    for (const job of jobs) {
      const n = Number(String(job.id).slice(4));
      expect(job.state).toBe(n % 10 === 0 ? "failed" : "succeeded");
      expect(job.settledBy).toBe("reconcile");
    }
    expect(receiver.deliveries).toHaveLength(JOBS);
    expect(new Set(receiver.deliveries.map((d) => d.key)).size).toBe(JOBS);

    // The answers were recorded before /metrics is read: wait for the last delivery to be marked.
    let metrics = "";
    const counter = (pattern: RegExp) => Number(pattern.exec(metrics)?.[1] ?? 0);
    while (counter(/^finality_effect_attempts_total\{outcome="delivered"\} (\d+)/m) < JOBS) {
      metrics = await (await fetch(`${second.url}/metrics`)).text();
    }
    expect(
      counter(/^finality_polls_total\{provider="acme",outcome="observed"\} (\d+)/m),
    ).toBeGreaterThanOrEqual(JOBS);
    expect(counter(/^finality_effect_delivery_delay_seconds_count (\d+)/m)).toBe(JOBS);
    expect(counter(/^finality_anomalies\{kind="stuck"\} (\d+)/m)).toBe(0);
    expect((await second.stop("SIGTERM")).code).toBe(0);
  });
});
