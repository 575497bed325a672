import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  requirePostgres,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { tempDir } from "../helpers/temp-dir.js";
import type { Service } from "../http/helpers/service.js";
import { sendRoundRobin, timelineNotifications, withDuplicatesShuffled } from "./load-client.js";
import { SECRET, serveWith } from "./service-helpers.js";

const terminalOf = (i: number) => (i % 5 === 0 ? "failed" : "succeeded");

// 20,000 webhooks through three replicas and one database on a 2-core machine take ~46 s when it is
// quiet and more when the rest of the suite shares it (CI): the budget is the machine's, the
// assertions are the test.
describe("finality serve replicas on one PostgreSQL", { timeout: 240_000 }, () => {
  const dir = tempDir();
  const sql = adminClient();
  const schemas: string[] = [];
  const services: Service[] = [];
  beforeAll(() => requirePostgres("three finality replicas on one PostgreSQL"));
  afterAll(async () => {
    await Promise.all(services.map((s) => s.stop("SIGKILL")));
    for (const schema of schemas) await dropSchema(sql, schema);
    await sql.end();
    dir.cleanup();
  });

  async function replicas(count: number, config: Record<string, unknown>): Promise<Service[]> {
    const schema = uniqueSchemaName("finality_replicas");
    schemas.push(schema);
    const full = { ...config, store: { postgres: POSTGRES_TEST_URL, schema } };
    // Started together: the migration lock, not luck, keeps them from migrating twice.
    const started = await Promise.all(
      Array.from({ length: count }, (_, i) => serveWith(dir, undefined, full, `${schema}-${i}.json`)),
    );
    services.push(...started);
    return started;
  }

  async function ledger(schema: string) {
    const jobs = await sql.unsafe<{ id: string; state: string; settled_by: string | null }>(
      `SELECT id, state, settled_by FROM "${schema}".jobs`,
    );
    const ids = await sql.unsafe<{ delivery_id: string }>(
      `SELECT DISTINCT delivery_id FROM "${schema}".events WHERE delivery_id IS NOT NULL`,
    );
    return { jobs: new Map(jobs.map((j) => [j.id, j])), deliveries: new Set(ids.map((r) => r.delivery_id)) };
  }

  it("three replicas take 20,000 webhooks for 2,000 jobs with duplicates and reordering: every job right, effects once", async () => {
    const receiver = new EffectReceiver(SECRET);
    await receiver.listen();
    const group = await replicas(3, {
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      effects: [{ name: "notify", url: receiver.url, secret: SECRET }],
    });
    const notifications = withDuplicatesShuffled(
      Array.from({ length: 2000 }, (_, i) => timelineNotifications(`job-${i}`, terminalOf(i))).flat(),
      20_000,
      42,
    );
    const acknowledged = await sendRoundRobin(() => group.map((s) => s.url), SECRET, notifications, 48);
    expect(acknowledged.size).toBe(6000);
    await receiver.until(() => receiver.applied.size === 2000);

    const { jobs, deliveries } = await ledger(schemas.at(-1) as string);
    expect(jobs.size).toBe(2000);
    for (let i = 0; i < 2000; i++) expect(jobs.get(`job-${i}`)?.state).toBe(terminalOf(i));
    for (const id of acknowledged) expect(deliveries.has(id)).toBe(true);
    expect(receiver.deliveries).toHaveLength(2000);
    await Promise.all(group.map((s) => s.stop("SIGTERM")));
    await receiver.close();
  });

  it("a replica killed mid-load: the others carry on, its claimed work comes back, nothing acknowledged is lost", async () => {
    const receiver = new EffectReceiver(SECRET);
    receiver.delayMs = 20;
    await receiver.listen();
    const fake = new FakeProvider();
    await fake.listen();
    const JOBS = 600;
    for (let i = 0; i < JOBS; i++) fake.addJob(`job-${i}`, [{ afterMs: 0, state: terminalOf(i) }]);
    const group = await replicas(3, {
      providers: {
        acme: {
          type: "generic",
          webhook: { secrets: [SECRET] },
          poll: { url: `${fake.url}/jobs/{id}`, timeoutSeconds: 1 },
        },
      },
      reconcile: { graceSeconds: 1, minIntervalSeconds: 0.5, maxIntervalSeconds: 1 },
      effects: [{ name: "notify", url: receiver.url, secret: SECRET }],
      effectDelivery: { leaseSeconds: 2, timeoutSeconds: 1 },
    });
    // A third of the jobs never get their terminal webhook: only reconcile can settle them.
    const notifications = withDuplicatesShuffled(
      Array.from({ length: JOBS }, (_, i) => timelineNotifications(`job-${i}`, terminalOf(i)))
        .flat()
        .filter((n) => !(n.body.seq === 3 && Number(n.body.jobId.slice(4)) % 3 === 0)),
      3000,
      7,
    );
    const live = new Set(group);
    const victim = group[2] as Service;
    let killed = false;
    const acknowledged = await sendRoundRobin(
      () => [...live].map((s) => s.url),
      SECRET,
      notifications,
      32,
      (sent) => {
        if (!killed && sent === 1000) {
          killed = true;
          victim.child.kill("SIGKILL");
          live.delete(victim);
        }
      },
    );
    expect(killed).toBe(true);
    expect((await victim.exited).signal).toBe("SIGKILL");
    await receiver.until(() => receiver.applied.size === JOBS);

    const { jobs, deliveries } = await ledger(schemas.at(-1) as string);
    for (let i = 0; i < JOBS; i++) expect(jobs.get(`job-${i}`)?.state).toBe(terminalOf(i));
    for (const id of acknowledged) expect(deliveries.has(id)).toBe(true);
    const byReconcile = [...jobs.values()].filter((j) => j.settled_by === "reconcile").length;
    expect(byReconcile).toBeGreaterThanOrEqual(JOBS / 3 - 1);
    // At least once: a delivery in flight on the killed replica may be sent again, same key.
    expect(new Set(receiver.deliveries.map((d) => d.key)).size).toBe(JOBS);
    await Promise.all([...live].map((s) => s.stop("SIGTERM")));
    await receiver.close();
    await fake.close();
  });
});
