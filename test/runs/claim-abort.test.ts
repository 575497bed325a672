import { once } from "node:events";
import { type ClientRequest, request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app.js";
import { configSchema } from "../../src/config/config-schema.js";
import { createFinality } from "../../src/engine/create-finality.js";
import type { Finality } from "../../src/engine/finality.js";
import { type NodeServer, startNodeServer } from "../../src/http/node-server.js";
import type { Logger } from "../../src/http/request-log.js";
import { createRunService, type RunService } from "../../src/runs/run-service.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store, StoreTx } from "../../src/store/store.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";

// Defect: a long-poll claim woken by its client's abort claimed a run before it looked at the
// abort, so the run sat with a client that was gone until the lease ran out. An aborted claim
// claims nothing; a claim whose client leaves while it commits is given back.

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Calls `onEmptyClaim` after each committed transaction in which a claim found nothing,
 * `inClaim` when a claim picks a run, and `beforeTransaction` before each transaction begins.
 */
function watchedStore(
  store: Store,
  hooks: {
    onEmptyClaim?: () => void;
    inClaim?: () => void | Promise<void>;
    beforeTransaction?: () => Promise<void>;
  },
): Store {
  const transaction: Store["transaction"] = async (work) => {
    await hooks.beforeTransaction?.();
    let emptyClaim = false;
    const result = await store.transaction((tx) => {
      emptyClaim = false;
      const watched = new Proxy(tx, {
        get(target, prop, receiver) {
          if (prop === "pickClaimableRun")
            return async (...args: Parameters<StoreTx["pickClaimableRun"]>) => {
              const run = await target.pickClaimableRun(...args);
              if (run === null) emptyClaim = true;
              else await hooks.inClaim?.();
              return run;
            };
          const value = Reflect.get(target, prop, receiver);
          return typeof value === "function" ? value.bind(target) : value;
        },
      });
      return work(watched);
    });
    if (emptyClaim) hooks.onEmptyClaim?.();
    return result;
  };
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === "transaction") return transaction;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function ledger(store: Store): Finality {
  const finality = createFinality({ store, providers: { generic: {} } });
  cleanups.push(() => finality.close());
  return finality;
}

/** A promise and its resolver, for one event a test waits on. */
function signal<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

describe("a long-poll claim whose client has gone", () => {
  it("over real HTTP: the client disconnects mid-long-poll, a run is enqueued, and the next worker claims it at once", async () => {
    const dir = tempDir("finality-claim-abort-");
    cleanups.push(() => dir.cleanup());
    const file = dir.file("ledger.db");
    let waiting = signal();
    const finality = ledger(
      watchedStore(createSqliteStore({ path: file }), { onEmptyClaim: () => waiting.resolve() }),
    );
    // A long re-check: only the abort can wake the waiting claim within the test.
    const runs = createRunService({ finality, recheckMs: 60_000 });
    const finished: { route: string; status: number }[] = [];
    const claimAnswered = signal<number>();
    const logger: Logger = {
      info: (fields) => record(fields),
      warn: (fields) => record(fields),
      error: (fields) => record(fields),
    };
    function record(fields: object): void {
      const { route, status } = fields as { route: string; status: number };
      finished.push({ route, status });
      if (route === "/v1/workers/:workerId/claim") claimAnswered.resolve(status);
    }
    const config = configSchema.parse({});
    const app = createApp({ finality, config, runs, logger, receivers: new Map() });
    const server: NodeServer = await startNodeServer(app, { host: "127.0.0.1", port: 0 });
    cleanups.push(() => server.close());
    cleanups.push(() => runs.close());

    // Worker 1 long-polls for 30 s, then goes away while it waits.
    const { port } = new URL(server.url);
    const gone: ClientRequest = httpRequest({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: "/v1/workers/w1/claim",
      headers: { "content-type": "application/json" },
    });
    gone.on("error", () => {}); // the socket is destroyed on purpose
    gone.end(JSON.stringify({ waitSeconds: 30 }));
    await waiting.promise;
    waiting = signal();

    // Another replica (its own service, its own wake-ups, the same database) enqueues a run:
    // this process's waiting claim is not woken by it.
    const replica = createRunService({ finality: ledger(createSqliteStore({ path: file })) });
    cleanups.push(() => replica.close());
    const { run } = await replica.enqueue({ kind: "render" });

    gone.destroy();
    await claimAnswered.promise;

    const next = await fetch(`${server.url}/v1/workers/w2/claim`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ waitSeconds: 0 }),
    });
    expect(next.status).toBe(200);
    expect(((await next.json()) as { run: { id: string } }).run.id).toBe(run.id);
    // Worker 1 never held it: the only attempt is worker 2's.
    const attempts = await engineOf(finality).store.runAttempts(run.id);
    expect(attempts.map((a) => a.workerId)).toEqual(["w2"]);
  });

  it.each([
    [0, false],
    [5, false],
    [0, true],
    [5, true],
  ])(
    "a claim (waitSeconds %i, start %s) whose client leaves while the claim commits is given back at once, with its attempt refunded",
    async (waitSeconds, start) => {
      const dir = tempDir("finality-claim-abort-");
      cleanups.push(() => dir.cleanup());
      const controller = new AbortController();
      let armed = true;
      const finality = ledger(
        watchedStore(createSqliteStore({ path: dir.file("ledger.db") }), {
          // The client goes away after the claim looked at the signal, before it commits.
          inClaim: () => {
            if (armed) controller.abort();
            armed = false;
          },
        }),
      );
      const runs: RunService = createRunService({ finality });
      cleanups.push(() => runs.close());
      const { run } = await runs.enqueue({ kind: "render" });

      const aborted = await runs.claim({ workerId: "w1", waitSeconds, start, signal: controller.signal });
      expect(aborted).toBeNull();
      const afterAbort = await engineOf(finality).store.getRun(run.id);
      expect(afterAbort).toMatchObject({ status: "queued", attemptCount: 0, currentAttemptId: null });
      const [withdrawn] = await engineOf(finality).store.runAttempts(run.id);
      expect(withdrawn).toMatchObject({ workerId: "w1", status: "released", leaseExpiresAt: null });
      const events = (await engineOf(finality).store.runEvents(run.id)).map((e) => e.type);
      expect(events).toContain("attempt.withdrawn");
      // A claim that started the run recorded the start; its mirror job stays `running`, as for
      // any run queued again after it ran.
      expect(events.includes("worker.started")).toBe(start);
      expect((await finality.getJob({ provider: "runs", id: run.id }))?.state).toBe(
        start ? "running" : "pending",
      );

      const next = await runs.claim({ workerId: "w2" });
      expect(next?.run.id).toBe(run.id);
      expect(next?.run.attemptCount).toBe(1);
    },
  );

  // Defect: the withdrawal queued the run again whatever a cancel had asked meanwhile, and a
  // queued run with a cancel pending is never claimed: it sat queued for ever.
  it.each([false, true])(
    "a cancel asked for between the claim's commit and its withdrawal (start %s) ends the run cancelled",
    async (start) => {
      const dir = tempDir("finality-claim-abort-");
      cleanups.push(() => dir.cleanup());
      const controller = new AbortController();
      let runs: RunService | undefined;
      let runId = "";
      let cancelNext = false;
      const finality = ledger(
        watchedStore(createSqliteStore({ path: dir.file("ledger.db") }), {
          inClaim: () => {
            controller.abort();
            cancelNext = true;
          },
          // The transaction after the claim's is its withdrawal: the cancel commits first.
          beforeTransaction: async () => {
            if (!cancelNext) return;
            cancelNext = false;
            expect((await runs?.cancel(runId))?.cancelRequested).toBe(true);
          },
        }),
      );
      runs = createRunService({ finality });
      cleanups.push(() => runs?.close());
      runId = (await runs.enqueue({ kind: "render" })).run.id;

      expect(await runs.claim({ workerId: "w1", start, signal: controller.signal })).toBeNull();
      const store = engineOf(finality).store;
      expect(await store.getRun(runId)).toMatchObject({ status: "cancelled", error: { code: "CANCELLED" } });
      expect(await store.runAttempts(runId)).toMatchObject([{ status: "released", leaseExpiresAt: null }]);
      const events = (await store.runEvents(runId)).map((e) => e.type);
      expect(events.slice(-2)).toEqual(["attempt.withdrawn", "run.cancelled"]);
      expect((await finality.getJob({ provider: "runs", id: runId }))?.state).toBe("cancelled");
    },
  );

  it("a claim aborted before it starts claims nothing", async () => {
    const dir = tempDir("finality-claim-abort-");
    cleanups.push(() => dir.cleanup());
    const finality = ledger(createSqliteStore({ path: dir.file("ledger.db") }));
    const runs = createRunService({ finality });
    cleanups.push(() => runs.close());
    const { run } = await runs.enqueue({ kind: "render" });
    const controller = new AbortController();
    controller.abort();
    for (const waitSeconds of [0, 5])
      expect(await runs.claim({ workerId: "w1", waitSeconds, signal: controller.signal })).toBeNull();
    expect(await engineOf(finality).store.runAttempts(run.id)).toEqual([]);
  });
});

describe("a worker's end with `next` whose client has gone", () => {
  it("over real HTTP: the client disconnects while the end commits; the end is recorded, the next run given back", async () => {
    const dir = tempDir("finality-claim-abort-");
    cleanups.push(() => dir.cleanup());
    let gone: ClientRequest | undefined;
    let endSignal: AbortSignal | undefined;
    const finality = ledger(
      watchedStore(createSqliteStore({ path: dir.file("ledger.db") }), {
        // The end's claim picked the next run: its client goes, and the route's signal says so
        // before the transaction commits (the first claim, over HTTP too, has no `gone` yet).
        inClaim: async () => {
          const client = gone;
          if (client === undefined || endSignal === undefined) return;
          gone = undefined; // once: later claims (worker 2's) pass
          const aborted = once(endSignal, "abort");
          client.destroy();
          await aborted;
        },
      }),
    );
    const service = createRunService({ finality });
    cleanups.push(() => service.close());
    // The service as the route calls it, keeping the signal the route passes with `next`.
    const runs = new Proxy(service, {
      get(target, prop, receiver) {
        if (prop === "recordEvent")
          return (...args: Parameters<RunService["recordEvent"]>) => {
            endSignal = args[3]?.signal;
            return target.recordEvent(...args);
          };
        return Reflect.get(target, prop, receiver);
      },
    });
    const endFinished = signal<number>();
    const log = (fields: object) => {
      const { route, status } = fields as { route: string; status: number };
      if (route === "/v1/attempts/:id/events") endFinished.resolve(status);
    };
    const logger: Logger = { info: log, warn: log, error: log };
    const app = createApp({ finality, config: configSchema.parse({}), runs, logger, receivers: new Map() });
    const server: NodeServer = await startNodeServer(app, { host: "127.0.0.1", port: 0 });
    cleanups.push(() => server.close());
    const first = await service.enqueue({ kind: "render" });
    const second = await service.enqueue({ kind: "render" });
    const claimed = await fetch(`${server.url}/v1/workers/w1/claim`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ start: true }),
    });
    const { attempt } = (await claimed.json()) as { attempt: { id: string; generation: number } };

    const { port } = new URL(server.url);
    gone = httpRequest({
      host: "127.0.0.1",
      port,
      method: "POST",
      path: `/v1/attempts/${attempt.id}/events`,
      headers: { "content-type": "application/json" },
    });
    gone.on("error", () => {}); // the socket is destroyed on purpose
    gone.end(
      JSON.stringify({
        generation: attempt.generation,
        sequence: 1,
        type: "succeeded",
        next: { start: true },
      }),
    );
    // Answered 200, to no one: the client left while the end committed.
    expect(await endFinished.promise).toBe(200);

    const store = engineOf(finality).store;
    expect(await store.getRun(first.run.id)).toMatchObject({ status: "succeeded" });
    // The claim the end made is withdrawn: the next run is queued again, its attempt refunded.
    expect(await store.getRun(second.run.id)).toMatchObject({ status: "queued", attemptCount: 0 });
    expect(await store.runAttempts(second.run.id)).toMatchObject([
      { workerId: "w1", status: "released", leaseExpiresAt: null },
    ]);
    const next = await service.claim({ workerId: "w2" });
    expect(next?.run.id).toBe(second.run.id);
  });
});
