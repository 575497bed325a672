import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeProvider, sendNotification } from "../../src/testing/fake-provider.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli, type Service, startService } from "../http/helpers/service.js";
import { SECRET } from "../http/helpers/webhooks.js";

// The promise "a job submitted through an intent, or created at a provider with discovery on, is
// settled even if its registration and all its webhooks are lost", on a real `finality serve`
// (built dist) killed with SIGKILL, against the generic fake over real HTTP.

const fake = new FakeProvider();
const receiver = new EffectReceiver(SECRET);
const dir = tempDir("finality-intent-crash-");
const running: Service[] = [];

beforeAll(async () => {
  await fake.listen();
  await receiver.listen();
});
afterAll(async () => {
  for (const service of running) await service.stop("SIGKILL");
  await fake.close();
  await receiver.close();
  dir.cleanup();
});

/** The configuration, with discovery on or off (`discover.enabled`, `intervalSeconds`, `pagesPerSweep`). */
function writeConfig(
  name: string,
  discover: { enabled: boolean; intervalSeconds?: number; pagesPerSweep?: number },
) {
  const file = dir.file(name);
  writeFileSync(
    file,
    JSON.stringify({
      providers: {
        acme: {
          type: "generic",
          webhook: { secrets: [SECRET] },
          poll: { url: `${fake.url}/jobs/{id}` },
          intentTimeoutSeconds: 1,
          discover: { url: `${fake.url}/jobs?after={cursor}`, lookbackHours: 48, ...discover },
        },
      },
      reconcile: { graceSeconds: 0.2, minIntervalSeconds: 0.2, maxIntervalSeconds: 0.5 },
      effects: [
        { name: "notify", url: `${receiver.url}/done`, secret: SECRET },
        { name: "orphans", url: `${receiver.url}/orphaned`, secret: SECRET, on: ["orphaned"] },
      ],
      effectDelivery: { pollIntervalSeconds: 0.2, retrySeconds: [0.2] },
    }),
  );
  return file;
}

async function start(db: string, config: string): Promise<Service> {
  const service = await startService({ db, args: ["--config", config] });
  running.push(service);
  return service;
}

const json = async (service: Service, path: string, body?: unknown) => {
  const response = await fetch(`${service.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: { "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const deliveriesFor = (path: string, id: string) =>
  receiver.deliveries.filter((d) => d.path.endsWith(path) && d.body.job.id === id);

describe("intents and discovery on a real server", () => {
  it("SIGKILL between the provider's accept and the attach: orphaned, found by its tag, settled with one set of effects", async () => {
    const db = dir.file("crash.db");
    const off = writeConfig("off.json", { enabled: false });
    const first = await start(db, off);
    const recorded = await json(first, "/v1/intents", { provider: "acme", key: "order-1", kind: "render" });
    expect(recorded.status).toBe(201);
    // The provider accepts the job and keeps the tag; its webhook is never sent.
    fake.addJob("remote-1", [{ afterMs: 0, state: "succeeded", result: { ok: 1 } }], { tag: "order-1" });
    expect(await first.stop("SIGKILL")).toEqual({ code: null, signal: "SIGKILL" });

    const second = await start(db, off);
    // Past its timeout the intent is flagged once, and its alert goes out through the outbox.
    await receiver.until(() => deliveriesFor("/orphaned", "order-1").length > 0);
    expect((await json(second, "/v1/intents/order-1")).body).toMatchObject({ status: "orphaned" });
    expect((await json(second, "/v1/jobs/acme/remote-1")).status).toBe(404);

    // A discovery sweep (the CLI, beside the running server) finds the job by its tag.
    const on = writeConfig("on.json", { enabled: true });
    const swept = await runCli(["discover", "--once", "--json", "--config", on, "--db", db]);
    expect(swept.code, swept.stderr).toBe(0);
    expect(JSON.parse(swept.stdout).sweeps).toEqual([
      expect.objectContaining({ provider: "acme", attached: 1, adopted: 0, done: true }),
    ]);
    await receiver.until(() => deliveriesFor("/done", "remote-1").length > 0);
    const intent = (await json(second, "/v1/intents/order-1")).body;
    expect(intent).toMatchObject({ status: "attached", jobId: "remote-1", attachedBy: "discovery" });
    const job = (await json(second, "/v1/jobs/acme/remote-1")).body;
    expect(job).toMatchObject({ state: "succeeded", kind: "render", registered: true, result: { ok: 1 } });

    // One set of effects, even after another restart and another sweep.
    await second.stop("SIGKILL");
    const third = await start(db, off);
    const again = await runCli(["discover", "--once", "--json", "--config", on, "--db", db]);
    expect(JSON.parse(again.stdout).sweeps[0]).toMatchObject({ attached: 0, adopted: 0 });
    await json(third, "/v1/intents", { provider: "acme", key: "probe", kind: "render" });
    await receiver.until(() => deliveriesFor("/orphaned", "probe").length > 0);
    expect(deliveriesFor("/done", "remote-1")).toHaveLength(1);
    expect(deliveriesFor("/orphaned", "order-1")).toHaveLength(1);
    await third.stop("SIGTERM");
  });

  it("a webhook that adopts the job before the attach: then the attach; one job, one set of effects", async () => {
    const db = dir.file("webhook-first.db");
    const service = await start(db, writeConfig("off2.json", { enabled: false }));
    await json(service, "/v1/intents", {
      provider: "acme",
      key: "order-2",
      kind: "render",
      metadata: { n: 2 },
    });
    const status = await sendNotification(`${service.url}/webhooks/acme`, SECRET, {
      webhookId: "msg-remote-2",
      body: { jobId: "remote-2", state: "succeeded", seq: 1 },
    });
    expect(status).toBe(200);
    const attached = await json(service, "/v1/intents/order-2/attach", { id: "remote-2" });
    expect(attached.status).toBe(200);
    expect(attached.body.job).toMatchObject({
      id: "remote-2",
      state: "succeeded",
      kind: "render",
      metadata: { n: 2 },
    });
    const jobs = await json(service, "/v1/jobs?provider=acme");
    expect((jobs.body.items as { id: string }[]).map((j) => j.id)).toEqual(["remote-2"]);
    await receiver.until(() => deliveriesFor("/done", "remote-2").length > 0);
    expect(new Set(deliveriesFor("/done", "remote-2").map((d) => d.key)).size).toBe(1);
    await service.stop("SIGTERM");
  });

  it("serve's sweeps: pages, a 429 with Retry-After mid-sweep, a cursor that survives SIGKILL", async () => {
    const db = dir.file("sweeps.db");
    const config = writeConfig("sweeps.json", { enabled: true, intervalSeconds: 0.3, pagesPerSweep: 10 });
    fake.listPageSize = 2;
    const base = fake.listCalls;
    fake.listCursors.length = 0;
    // The second list call meets a 429: the sweep stops and the next one waits its Retry-After.
    fake.failListCalls.set(base + 2, { status: 429, retryAfterSeconds: 1 });
    // The fake lists remote-1 (the first test's) and these five: six jobs, three pages of two.
    const ids = ["remote-1"];
    for (let i = 1; i <= 5; i++) {
      const id = `listed-${i}`;
      ids.push(id);
      fake.addJob(id, [
        { afterMs: 0, state: "running" },
        { afterMs: 300, state: "succeeded" },
      ]);
    }
    const service = await start(db, config);
    await receiver.until(() => ids.slice(1).every((id) => deliveriesFor("/done", id).length > 0));
    // First page, the 429, then from the stored cursor on; later sweeps read the last page again.
    expect(fake.listCursors.slice(0, 4)).toEqual(["", "2", "2", "4"]);
    expect(new Set(fake.listCursors.slice(4))).toEqual(new Set(["4"]));
    const job = (await json(service, "/v1/jobs/acme/listed-3")).body;
    expect(job).toMatchObject({ state: "succeeded", settledBy: "reconcile", registered: false });
    const events = (await json(service, "/v1/jobs/acme/listed-3/events")).body.items as { source: string }[];
    expect(events[0]?.source).toBe("discovery");
    const metrics = await (await fetch(`${service.url}/metrics`)).text();
    expect(metrics).toMatch(/finality_jobs_discovered_total\{provider="acme"\} 6/);
    expect(metrics).toMatch(/finality_job_discovery_lag_seconds_count\{provider="acme"\} 6/);

    await service.stop("SIGKILL");
    fake.addJob("listed-6", [{ afterMs: 0, state: "succeeded" }]);
    const calls = fake.listCursors.length;
    const restarted = await start(db, config);
    await receiver.until(() => deliveriesFor("/done", "listed-6").length > 0);
    // The first sweep after the restart starts at the stored cursor, not at the beginning.
    expect(fake.listCursors[calls]).toBe("4");
    for (const id of ids.slice(1)) expect(deliveriesFor("/done", id)).toHaveLength(1);
    await restarted.stop("SIGTERM");
  });
});
