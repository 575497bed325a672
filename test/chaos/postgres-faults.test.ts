import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Notification } from "../../src/testing/fake-provider.js";
import { sendNotification } from "../../src/testing/fake-provider.js";
import { adminClient, POSTGRES_TEST_URL, requirePostgres, uniqueSchemaName } from "../helpers/postgres.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { tempDir } from "../helpers/temp-dir.js";
import { startThrowawayPostgres, throwawayPostgresUnavailable } from "../helpers/throwaway-postgres.mjs";
import type { Service } from "../http/helpers/service.js";
import { timelineNotifications, withDuplicatesShuffled } from "../service/load-client.js";
import { SECRET, serveWith } from "../service/service-helpers.js";

// Faults of PostgreSQL itself under three real `finality serve` replicas: connections cut, the
// server restarted, one replica frozen mid-transaction. None may end a replica, lose an
// acknowledged webhook, or make the others hang.
const noCluster = throwawayPostgresUnavailable();
const terminalOf = (i: number) => (i % 4 === 0 ? "failed" : "succeeded");
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Load {
  acknowledged: Set<string>;
  /** Per webhook id: ms from its first send to its 200, retries included. */
  took: Map<string, number>;
  statuses: Map<number, number>;
  /** Resolves when every notification got its 200 (or rejects when one did not in time). */
  done: Promise<void>;
}

/**
 * Every notification sent round-robin until a 200, a short pause after a failure (a sender's
 * retry), `concurrency` at once. Bounded: a notification still refused after `deadlineMs` fails the load.
 */
function sendAll(
  urls: () => string[],
  notifications: Notification[],
  concurrency: number,
  deadlineMs = 40_000,
): Load {
  const acknowledged = new Set<string>();
  const took = new Map<string, number>();
  const statuses = new Map<number, number>();
  let next = 0;
  let turn = 0;
  async function lane(): Promise<void> {
    for (let index = next++; index < notifications.length; index = next++) {
      const notification = notifications[index] as Notification;
      const started = performance.now();
      for (;;) {
        const live = urls();
        const url = live[turn++ % live.length] as string;
        const status = await sendNotification(`${url}/webhooks/acme`, SECRET, notification);
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
        if (status === 200) {
          acknowledged.add(notification.webhookId);
          took.set(
            notification.webhookId,
            Math.max(took.get(notification.webhookId) ?? 0, performance.now() - started),
          );
          break;
        }
        if (status !== 0 && status < 500) throw new Error(`webhook answered ${status}`);
        if (performance.now() - started > deadlineMs)
          throw new Error(`${notification.webhookId} still refused after ${deadlineMs} ms`);
        await sleep(50);
      }
    }
  }
  const done = Promise.all(Array.from({ length: concurrency }, lane)).then(() => {});
  return { acknowledged, took, statuses, done };
}

/** /readyz with the one-second deadline a load balancer would give it: its status, or "hung". */
async function readyz(url: string): Promise<number | "hung"> {
  try {
    const response = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(1000) });
    await response.arrayBuffer();
    return response.status;
  } catch {
    return "hung";
  }
}

describe("PostgreSQL faults under three finality replicas", () => {
  const dir = tempDir("finality-pgchaos-");
  const admin = adminClient();
  const cleanups: (() => Promise<void> | void)[] = [];
  beforeAll(() => requirePostgres("PostgreSQL fault chaos"));
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
    await admin.end({ timeout: 5 });
    dir.cleanup();
  });

  /** Three replicas on `url`, each with its own application_name so a test can cut only its sessions. */
  async function replicas(
    url: string,
    schema: string,
    receiver: EffectReceiver,
    timeouts: { lockTimeoutSeconds: number; idleInTransactionTimeoutSeconds: number } = {
      lockTimeoutSeconds: 1,
      idleInTransactionTimeoutSeconds: 2,
    },
  ) {
    const names = [0, 1, 2].map((i) => `${schema}_r${i}`);
    const group: Service[] = await Promise.all(
      names.map((name, i) =>
        serveWith(
          dir,
          undefined,
          {
            providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
            effects: [{ name: "notify", url: receiver.url, secret: SECRET }],
            effectDelivery: { leaseSeconds: 2, timeoutSeconds: 1, retrySeconds: [0.2, 0.5, 1] },
            store: {
              postgres: `${url}?application_name=${name}`,
              schema,
              poolSize: 4,
              connectTimeoutSeconds: 2,
              statementTimeoutSeconds: 10,
              ...timeouts,
            },
          },
          `${name}-${i}.json`,
        ),
      ),
    );
    cleanups.push(() => Promise.all(group.map((s) => s.stop("SIGKILL"))).then(() => {}));
    const exits: string[] = [];
    for (const [i, s] of group.entries())
      void s.exited.then((exit) =>
        exits.push(`replica ${i} exited ${exit.code ?? exit.signal}: ${s.stderr().slice(-2000)}`),
      );
    return { group, names, exits };
  }

  /** The ledger: acknowledged ids all recorded, every job in its state, each effect key delivered. */
  async function settled(
    sql: ReturnType<typeof adminClient>,
    schema: string,
    jobs: number,
    load: Load,
    receiver: EffectReceiver,
  ) {
    await receiver.until(() => receiver.applied.size >= jobs);
    const rows = await sql.unsafe<{ id: string; state: string }>(`SELECT id, state FROM "${schema}".jobs`);
    const states = new Map(rows.map((r) => [r.id, r.state]));
    const recorded = new Set(
      (
        await sql.unsafe<{ delivery_id: string }>(
          `SELECT DISTINCT delivery_id FROM "${schema}".events WHERE delivery_id IS NOT NULL`,
        )
      ).map((r) => r.delivery_id),
    );
    const lost = [...load.acknowledged].filter((id) => !recorded.has(id));
    const wrong = Array.from({ length: jobs }, (_, i) => i).filter(
      (i) => states.get(`job-${i}`) !== terminalOf(i),
    );
    const outbox = await sql.unsafe<{ status: string; n: number }>(
      `SELECT status, count(*)::int AS n FROM "${schema}".outbox GROUP BY status`,
    );
    return { lost, wrong, outbox, keys: new Set(receiver.deliveries.map((d) => d.key)).size };
  }

  it("connections cut again and again under load: no replica exits, nothing acknowledged is lost, effects once", async () => {
    const receiver = new EffectReceiver(SECRET);
    await receiver.listen();
    cleanups.push(() => receiver.close());
    const schema = uniqueSchemaName("finality_cuts");
    cleanups.push(() => admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).then(() => {}));
    const { group, names, exits } = await replicas(POSTGRES_TEST_URL, schema, receiver);
    const JOBS = 150;
    const notifications = withDuplicatesShuffled(
      Array.from({ length: JOBS }, (_, i) => timelineNotifications(`job-${i}`, terminalOf(i))).flat(),
      JOBS * 4,
      11,
    );
    const load = sendAll(() => group.map((s) => s.url), notifications, 12);
    let cut = 0;
    let rounds = 0;
    const slowReadyz: string[] = [];
    // Cut only this test's sessions (by application_name): other files share this server.
    let finished = false;
    void load.done.then(
      () => {
        finished = true;
      },
      () => {
        finished = true;
      },
    );
    for (; rounds < 40 && !finished; rounds++) {
      const [row] = await admin.unsafe<{ n: number }>(
        "SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name = ANY($1)",
        [names],
      );
      cut += row?.n ?? 0;
      for (const s of group)
        if ((await readyz(s.url)) === "hung") slowReadyz.push(`round ${rounds}: ${s.url}`);
      await sleep(150);
    }
    await load.done;
    const result = await settled(admin, schema, JOBS, load, receiver);
    console.log(
      `cuts: ${rounds} rounds, ${cut} sessions terminated; answers ${JSON.stringify(Object.fromEntries(load.statuses))}; outbox ${JSON.stringify(result.outbox)}`,
    );
    expect(cut).toBeGreaterThan(10);
    expect(exits).toEqual([]);
    expect(slowReadyz).toEqual([]);
    expect(result.lost).toEqual([]);
    expect(result.wrong).toEqual([]);
    expect(receiver.applied.size).toBe(JOBS);
    expect(result.keys).toBe(JOBS);
    // Every replica is whole again: ready, and its pool's connections usable.
    for (const s of group) await expect.poll(() => readyz(s.url), { timeout: 5000 }).toBe(200);
    const metrics = await (await fetch(`${group[0]?.url}/metrics`)).text();
    expect(metrics).toMatch(/finality_db_pool_events_total\{event="connection-error"\} \d+/);
  }, 90_000);

  it("the database restarted under load (a throwaway cluster): /readyz says 503 within a second while it is down, then everything settles", async () => {
    // Fails, never skips, where no cluster can be made: the restart would go untested.
    if (noCluster !== null)
      throw new Error(`a throwaway PostgreSQL cluster cannot be made here: ${noCluster}`);
    const cluster = await startThrowawayPostgres();
    cleanups.push(() => cluster.remove());
    const clusterAdmin = adminClient(cluster.url);
    cleanups.push(() => clusterAdmin.end({ timeout: 2 }));
    const receiver = new EffectReceiver(SECRET);
    await receiver.listen();
    cleanups.push(() => receiver.close());
    const schema = "finality_restart";
    const { group, exits } = await replicas(cluster.url, schema, receiver);
    const JOBS = 120;
    const notifications = withDuplicatesShuffled(
      Array.from({ length: JOBS }, (_, i) => timelineNotifications(`job-${i}`, terminalOf(i))).flat(),
      JOBS * 4,
      12,
    );
    const load = sendAll(() => group.map((s) => s.url), notifications, 12);
    const downAnswers: (number | "hung")[] = [];
    for (let restart = 0; restart < 2; restart++) {
      await sleep(600);
      cluster.restart();
      await sleep(600);
      // Down for a moment: every replica must say so at once rather than hang.
      cluster.stop();
      for (const s of group) downAnswers.push(await readyz(s.url));
      cluster.start();
    }
    await load.done;
    const result = await settled(clusterAdmin, schema, JOBS, load, receiver);
    console.log(
      `restart: answers ${JSON.stringify(Object.fromEntries(load.statuses))}; /readyz while down ${downAnswers.join(",")}; outbox ${JSON.stringify(result.outbox)}`,
    );
    expect(exits).toEqual([]);
    expect(downAnswers).toEqual(Array(6).fill(503));
    expect(result.lost).toEqual([]);
    expect(result.wrong).toEqual([]);
    expect(receiver.applied.size).toBe(JOBS);
    expect(result.keys).toBe(JOBS);
    for (const s of group) await expect.poll(() => readyz(s.url), { timeout: 5000 }).toBe(200);
  }, 90_000);

  it("one replica frozen (SIGSTOP) holding a job's row lock: the others answer unrelated webhooks within seconds; after SIGCONT all settles", async () => {
    const receiver = new EffectReceiver(SECRET);
    await receiver.listen();
    cleanups.push(() => receiver.close());
    const schema = uniqueSchemaName("finality_freeze");
    cleanups.push(() => admin.unsafe(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).then(() => {}));
    // The frozen session is ended by the server after 8 s, and a lock wait by lock_timeout after
    // 5 s: both well above the 3 s asked of unrelated webhooks, so a wait for the frozen replica's
    // locks (a batch-mate waiting inside a group, a lock on the whole table) shows as a miss.
    const { group, names, exits } = await replicas(POSTGRES_TEST_URL, schema, receiver, {
      lockTimeoutSeconds: 5,
      idleInTransactionTimeoutSeconds: 8,
    });
    const [frozen, ...healthy] = group as [Service, Service, Service];
    const JOBS = 60;
    const timelines = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) =>
        timelineNotifications(`job-${from + i}`, terminalOf(from + i)),
      ).flat();
    // job-0 is the one whose row the frozen replica holds; jobs 1-30 share a replica with it.
    const shared = timelines(0, 31);
    const others = timelines(31, JOBS);
    const all = [...shared, ...others];
    // A burst for one job at the replica to be frozen, until it is caught inside a transaction
    // (its session idle in transaction: it holds the job's row lock and waits for the frozen
    // process). Bounded: 100 tries (a loaded machine shifts the timing, so some runs need more).
    let caught = false;
    for (let attempt = 0; attempt < 100 && !caught; attempt++) {
      const burst = Array.from({ length: 12 }, (_, k) =>
        sendNotification(`${frozen.url}/webhooks/acme`, SECRET, {
          webhookId: `burst_${attempt}_${k}`,
          body: { jobId: "job-0", state: "running", seq: 0 },
        }),
      );
      await sleep(attempt % 5);
      frozen.child.kill("SIGSTOP");
      // Idle in transaction after SELECT ... FOR UPDATE on jobs (which takes RowShareLock on the table).
      const holding = await admin.unsafe<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity a JOIN pg_locks l ON l.pid = a.pid
         WHERE a.application_name = $1 AND a.state = 'idle in transaction' AND l.mode = 'RowShareLock'
           AND l.relation = to_regclass($2)`,
        [names[0] as string, `"${schema}".jobs`],
      );
      if ((holding[0]?.n ?? 0) > 0) caught = true;
      else {
        frozen.child.kill("SIGCONT");
        await Promise.all(burst);
      }
    }
    expect(caught).toBe(true);
    // While it is frozen: the locked job's webhooks and those of 30 unrelated jobs at once to ONE
    // healthy replica, so that they share its groups (a sender retries there too); the other
    // jobs' webhooks round-robin over both healthy replicas at the same time.
    const started = performance.now();
    const sameReplica = sendAll(() => [(healthy[0] as Service).url], shared, shared.length, 20_000);
    const roundRobin = sendAll(() => healthy.map((s) => s.url), others, 8, 20_000);
    const during: Load = {
      acknowledged: new Set(),
      took: new Map(),
      statuses: new Map(),
      done: Promise.all([sameReplica.done, roundRobin.done]).then(() => {
        for (const load of [sameReplica, roundRobin]) {
          for (const id of load.acknowledged) during.acknowledged.add(id);
          for (const [id, ms] of load.took) during.took.set(id, ms);
          for (const [status, n] of load.statuses)
            during.statuses.set(status, (during.statuses.get(status) ?? 0) + n);
        }
      }),
    };
    const readyAnswers: (number | "hung")[] = [];
    for (let i = 0; i < 4; i++) {
      for (const s of healthy) readyAnswers.push(await readyz(s.url));
      await sleep(250);
    }
    await during.done;
    const seconds = (performance.now() - started) / 1000;
    frozen.child.kill("SIGCONT");
    // After the heal: the thawed replica answers again (its dead session was replaced).
    await expect.poll(() => readyz(frozen.url), { timeout: 10_000 }).toBe(200);
    const result = await settled(admin, schema, JOBS, during, receiver);
    console.log(
      `freeze: healthy replicas took ${all.length} webhooks in ${seconds.toFixed(1)} s while one was frozen (slowest ${Math.max(...during.took.values()).toFixed(0)} ms, the locked job's ${["1", "2", "3"].map((k) => during.took.get(`msg_job-0_${k}`)?.toFixed(0)).join("/")} ms); answers ${JSON.stringify(Object.fromEntries(during.statuses))}; /readyz ${readyAnswers.join(",")}`,
    );
    expect(readyAnswers).not.toContain("hung");
    expect(seconds).toBeLessThan(15);
    // The locked job's first webhook really waited for the frozen replica's lock, until the server
    // ended that session (idle_in_transaction_session_timeout), then got its 200.
    expect(during.took.get("msg_job-0_1")).toBeGreaterThan(900);
    // Webhooks for other jobs than the locked one, those that shared its replica's groups
    // included: each answered 200 within 3 s, well before the server ends the frozen session.
    const unrelated = [...during.took].filter(([id]) => !id.startsWith("msg_job-0_"));
    expect(unrelated).toHaveLength(all.length - 3);
    expect(Math.max(...unrelated.map(([, ms]) => ms))).toBeLessThan(3000);
    expect(unrelated.filter(([id]) => shared.some((n) => n.webhookId === id))).toHaveLength(90);
    expect(exits).toEqual([]);
    expect(result.lost).toEqual([]);
    expect(result.wrong).toEqual([]);
    expect(receiver.applied.size).toBe(JOBS);
    expect(result.keys).toBe(JOBS);
  }, 90_000);
});
