import { describe, expect, it } from "vitest";
import { configSchema } from "../../src/config/config-schema.js";
import { parseConfig } from "../../src/config/load-config.js";
import { LEASE_EXPIRED_BEFORE_START_CODE } from "../../src/core/run-model.js";
import { runServiceOptionsFrom } from "../../src/runs/run-service-config.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";
import { api, serveWith } from "../service/service-helpers.js";
import { type Engine, openEngine, runSnapshot } from "./engine-harness.js";
import { waitFor } from "./http-harness.js";

// Suspected and confirmed: a run whose worker dies before its first heartbeat was released
// with its attempt refunded, for ever (a run that crashes its worker at start was handed out
// again and again). After `maxUnstartedReleases` such releases the next one ends it `lost`.

const expired = (counts: Record<string, number>) =>
  Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));

/** Claims the run and lets the lease run out without a heartbeat; the sweep's outcomes. */
async function claimAndDie(engine: Engine, workerId: string) {
  const claimed = await engine.runs.claim({ workerId, leaseSeconds: 10 });
  if (claimed === null) throw new Error("expected the run to be claimable");
  engine.clock.advance(10_000);
  return expired(await engine.runs.sweepOnce());
}

describe("a run whose worker dies before its first heartbeat", () => {
  it("is released five times by default, then ends lost with its own code, its effects enqueued once", async () => {
    const engine = openEngine();
    const { run } = await engine.runs.enqueue({ kind: "render", maxAttempts: 1 });
    for (let i = 1; i <= 5; i++)
      expect(await claimAndDie(engine, `w${i}`)).toEqual({ unstarted_released: 1 });
    expect(await engineOf(engine.finality).store.getRun(run.id)).toMatchObject({
      status: "queued",
      attemptCount: 0,
    });

    expect(await claimAndDie(engine, "w6")).toEqual({ unstarted_lost: 1 });
    const after = await runSnapshot(engine, run.id);
    expect(after.run).toMatchObject({ status: "lost", error: { code: LEASE_EXPIRED_BEFORE_START_CODE } });
    expect(after.attempts.map((a) => a.status)).toEqual(Array(6).fill("released"));
    expect(after.attempts.at(-1)?.error).toMatchObject({ code: LEASE_EXPIRED_BEFORE_START_CODE });
    expect(after.job).toMatchObject({ state: "lost", settledBy: "lease" });
    expect(after.effects.map((e) => e.trigger)).toEqual(["lost"]);
    expect(after.events.map((e) => e.type)).toContain("run.lost");
    // Nothing is handed out any more, and a second sweep changes nothing.
    expect(await engine.runs.claim({ workerId: "w7" })).toBeNull();
    expect(expired(await engine.runs.sweepOnce())).toEqual({});
    expect(await runSnapshot(engine, run.id)).toEqual(after);
  });

  it("the library option sets the bound (here 1), and a started attempt is not counted as one", async () => {
    const engine = openEngine({ maxUnstartedReleases: 1 });
    const { run } = await engine.runs.enqueue({ kind: "render", maxAttempts: 3 });
    expect(await claimAndDie(engine, "w1")).toEqual({ unstarted_released: 1 });
    // An attempt that heartbeats is alive at start: its loss is a lost attempt, retried as usual.
    const started = await engine.runs.claim({ workerId: "w2", leaseSeconds: 10 });
    await engine.runs.heartbeat(started!.attempt.id, { generation: started!.attempt.generation });
    engine.clock.advance(10_000);
    expect(expired(await engine.runs.sweepOnce())).toEqual({ lost_retry: 1 });
    engine.clock.advance(60_000); // past the retry backoff
    expect(await claimAndDie(engine, "w3")).toEqual({ unstarted_lost: 1 });
    expect(await engineOf(engine.finality).store.getRun(run.id)).toMatchObject({ status: "lost" });
  });

  it("refuses a bound that is not a whole number >= 0", () => {
    expect(() => openEngine({ maxUnstartedReleases: -1 })).toThrow(/maxUnstartedReleases/);
    expect(() => openEngine({ maxUnstartedReleases: 1.5 })).toThrow(/maxUnstartedReleases/);
  });
});

describe("workers.maxUnstartedReleases in the configuration", () => {
  it("defaults to 5, refuses what is not a whole number from 0 to 1000, and reaches the run service's options", () => {
    expect(configSchema.parse({}).workers.maxUnstartedReleases).toBe(5);
    for (const bad of [-1, 1.5, 1001, "5"])
      expect(() => parseConfig({ workers: { maxUnstartedReleases: bad } }, {}, {}), String(bad)).toThrow(
        /workers\.maxUnstartedReleases/,
      );
    const config = parseConfig({ workers: { maxUnstartedReleases: 2 } }, {}, {});
    expect(runServiceOptionsFrom(config.workers).maxUnstartedReleases).toBe(2);
  });

  it("reaches the sweeper of a real finality serve: with 0, the first expiry before start ends the run", async () => {
    const dir = tempDir("finality-unstarted-");
    const service = await serveWith(dir, dir.file("ledger.db"), {
      workers: { maxUnstartedReleases: 0, sweepIntervalSeconds: 0.1 },
    });
    try {
      const post = (path: string, body: unknown) =>
        api<Record<string, unknown>>(`${service.url}${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        });
      const run = await post("/v1/runs", { kind: "render" });
      expect(run.status).toBe(201);
      const claim = await post("/v1/workers/w1/claim", { leaseSeconds: 1 });
      expect(claim.status).toBe(200);
      // The worker dies at once: no heartbeat. The sweeper's expiry is the event waited for.
      const lost = await waitFor("the run to end lost", async () => {
        const answer = await api<{ status: string; error: { code: string } | null }>(
          `${service.url}/v1/runs/${run.body.id}`,
        );
        return answer.body.status === "lost" ? answer.body : undefined;
      });
      expect(lost.error?.code).toBe(LEASE_EXPIRED_BEFORE_START_CODE);
    } finally {
      await service.stop();
      dir.cleanup();
    }
  });
});
