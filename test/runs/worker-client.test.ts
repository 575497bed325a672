import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createWorker } from "../../src/worker/worker-client.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { client, type Proc, startServer, waitFor } from "./http-harness.js";

// The worker client when the server refuses what it sends, or the network misbehaves.
describe("the worker client under trouble", () => {
  let dir: TempDir;
  let server: Proc;
  let api: ReturnType<typeof client>;
  let url: string;

  beforeAll(async () => {
    dir = tempDir("finality-worker-client-");
    ({ server, url } = await startServer(dir.file("ledger.db")));
    api = client(url);
  });
  afterAll(async () => {
    server?.signal("SIGTERM");
    await server?.exited;
    dir?.cleanup();
  });

  const settled = (runId: string) =>
    waitFor(`run ${runId} to settle`, async () => {
      const run = await api.run(runId);
      return run.settledAt ? run : undefined;
    });

  /** Enqueues two runs of `kind`, starts `worker`, and waits until both succeeded with `{ ok: true }`. */
  async function twoRunsSucceed(worker: { start(): void }, kind: string) {
    const ids = [(await api.enqueue({ kind })).body.id, (await api.enqueue({ kind })).body.id];
    worker.start();
    for (const id of ids)
      expect(await settled(id)).toMatchObject({ status: "succeeded", output: { ok: true } });
  }

  it("claims with start: two calls per run (claim, succeeded), the started recorded by the claim, reports numbered from 1", async () => {
    const calls: string[] = [];
    const worker = createWorker({
      baseUrl: url,
      workerId: "w-two-calls",
      kinds: ["two-calls"],
      waitSeconds: 1,
      // Long enough that no heartbeat falls inside the run.
      leaseSeconds: 60,
      fetch: async (input, init) => {
        const path = new URL(String(input)).pathname.replace(/\/(workers|attempts)\/[^/]+/, "/$1/:id");
        calls.push(`${path} ${String(init?.body ?? "")}`);
        return fetch(input, init);
      },
      handler: async (run) => ({ echo: run.input }),
    });
    worker.start();
    try {
      const { body: queued } = await api.enqueue({ kind: "two-calls", input: { n: 1 } });
      const run = await settled(queued.id);
      expect(run).toMatchObject({ status: "succeeded", output: { echo: { n: 1 } } });
      const claims = calls.filter((call) => call.startsWith("/v1/workers/:id/claim"));
      expect(claims.every((call) => call.includes('"start":true'))).toBe(true);
      const reports = calls.filter((call) => call.startsWith("/v1/attempts/:id/events"));
      expect(reports).toHaveLength(1);
      expect(JSON.parse(reports[0]!.slice(reports[0]!.indexOf(" ") + 1))).toMatchObject({
        sequence: 1,
        type: "succeeded",
      });
      const events = (await api.events(queued.id)) as { type: string; detail: Record<string, unknown> }[];
      expect(events.map((e) => e.type)).toEqual([
        "run.queued",
        "attempt.claimed",
        "worker.started",
        "worker.succeeded",
      ]);
      expect(events[2]?.detail).toMatchObject({ withClaim: true });
      expect(events[2]?.detail).not.toHaveProperty("sequence");
    } finally {
      await worker.stop();
    }
  });

  // The claim's answer arrives after stop() began (the server never saw the client leave).
  // "finish": the run is handled like any in hand, and stop() waits for it (it used to be dropped,
  // its attempt spent when the lease ran out). "abandon": it is abandoned with the rest, unrun.
  it.each(["finish", "abandon"] as const)(
    "a run answered as the worker stops (onStop %s) is handled, or abandoned unrun",
    async (onStop) => {
      const kind = `stop-race-${onStop}`;
      const { body: queued } = await api.enqueue({ kind, maxAttempts: 1 });
      let stopped: Promise<void> | undefined;
      // Settles when the stop() called on the claim's answer has finished.
      let stopDone: (stop: Promise<void>) => void = () => {};
      const done = new Promise<void>((resolve) => {
        stopDone = resolve;
      });
      let handled = 0;
      const worker = createWorker({
        baseUrl: url,
        workerId: `w-${kind}`,
        kinds: [kind],
        waitSeconds: 1,
        leaseSeconds: 60,
        onStop,
        fetch: async (input, init) => {
          if (stopped !== undefined || !String(input).endsWith("/claim")) return fetch(input, init);
          const { signal: _unseen, ...rest } = init ?? {};
          const answer = await fetch(input, rest);
          stopped = worker.stop();
          stopDone(stopped);
          return answer;
        },
        handler: async () => {
          handled += 1;
          return { handled: true };
        },
      });
      worker.start();
      await done;
      if (onStop === "finish") {
        expect(handled).toBe(1);
        expect(await api.run(queued.id)).toMatchObject({ status: "succeeded", output: { handled: true } });
        return;
      }
      expect(handled).toBe(0);
      expect(await api.run(queued.id)).toMatchObject({ status: "running", attemptCount: 1 });
    },
  );

  /**
   * A worker for `kind` whose calls are recorded ("workers <body>" for claims, "attempts <body>"
   * for reports) and its errors kept; `send` answers a call in the server's place, or passes it on.
   */
  function recordedWorker(
    kind: string,
    send: (body: string, input: Parameters<typeof fetch>[0], init?: RequestInit) => Promise<Response> = (
      _b,
      i,
      o,
    ) => fetch(i, o),
  ) {
    const calls: string[] = [];
    const errors: Error[] = [];
    const worker = createWorker({
      baseUrl: url,
      workerId: `w-${kind}`,
      kinds: [kind],
      waitSeconds: 1,
      leaseSeconds: 60,
      onError: (error) => errors.push(error),
      fetch: async (input, init) => {
        const body = String(init?.body ?? "");
        calls.push(`${new URL(String(input)).pathname.split("/")[2]} ${body}`);
        return send(body, input, init);
      },
      handler: async (run) => (kind === "chain" ? { echo: run.input } : { ok: true }),
    });
    return { worker, calls, errors };
  }

  it("against a server older than `start` (400 naming the field), claims as before and reports started itself", async () => {
    const { worker, calls, errors } = recordedWorker("old-server", async (body, input, init) => {
      // What a server before `start` answered: its claim schema is strict, the key unknown.
      if (body.includes('"start"'))
        return new Response(
          JSON.stringify({
            type: "urn:finality:problem:invalid-request",
            title: "Invalid request",
            status: 400,
            detail: "start: unknown field",
            code: "invalid-request",
            retryable: false,
            field: "start",
          }),
          { status: 400, headers: { "content-type": "application/problem+json" } },
        );
      return fetch(input, init);
    });
    worker.start();
    try {
      const { body: queued } = await api.enqueue({ kind: "old-server" });
      expect((await settled(queued.id)).status).toBe("succeeded");
      expect(calls.filter((call) => call.includes('"start"'))).toHaveLength(1);
      expect(errors).toEqual([]);
      const events = (await api.events(queued.id)) as { type: string; detail: Record<string, unknown> }[];
      expect(events.map((e) => [e.type, e.detail.sequence ?? null])).toEqual([
        ["run.queued", null],
        ["attempt.claimed", null],
        ["worker.started", 1],
        ["worker.succeeded", 2],
      ]);
    } finally {
      await worker.stop();
    }
  });

  it("each run's end claims the next (`next`): runs queued ahead cost one claim, then one call each", async () => {
    const { worker, calls } = recordedWorker("chain");
    const ids: string[] = [];
    for (let n = 1; n <= 4; n++) ids.push((await api.enqueue({ kind: "chain", input: { n } })).body.id);
    worker.start();
    try {
      for (const id of ids) expect((await settled(id)).status).toBe("succeeded");
      const ends = calls.filter((call) => call.startsWith("attempts"));
      expect(ends).toHaveLength(4);
      for (const call of ends)
        expect(JSON.parse(call.slice(call.indexOf(" ") + 1))).toMatchObject({
          type: "succeeded",
          next: { kinds: ["chain"], start: true, leaseSeconds: 60 },
        });
      // One claim before the first run; the last end found nothing, and only then a long-poll.
      const claimsBeforeLastEnd = calls.slice(0, calls.indexOf(ends[3] as string));
      expect(claimsBeforeLastEnd.filter((call) => call.startsWith("workers"))).toHaveLength(1);
      for (const id of ids.slice(0, 3)) {
        const events = (await api.events(id)) as { type: string; detail: Record<string, unknown> }[];
        expect(events.find((e) => e.type === "worker.succeeded")?.detail).toHaveProperty("nextAttemptId");
      }
    } finally {
      await worker.stop();
    }
  });

  it("against a server older than `next` (400 naming the field), sends the end again without it, and claims as before", async () => {
    const { worker, calls, errors } = recordedWorker("no-next", (body, input, init) => {
      // The real server's 400 naming `next`, as one whose strict schema lacks the key answers.
      if (!body.includes('"next"')) return fetch(input, init);
      return fetch(input, { ...init, body: JSON.stringify({ ...JSON.parse(body), next: "not known here" }) });
    });
    try {
      await twoRunsSucceed(worker, "no-next");
      expect(calls.filter((call) => call.includes('"next"'))).toHaveLength(1);
      expect(calls.filter((call) => call.startsWith("workers")).length).toBeGreaterThanOrEqual(2);
      expect(errors).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  it("an end whose claim is refused (400 on `next`'s kinds) is sent again without it: the run is reported, not failed", async () => {
    const { worker, calls, errors } = recordedWorker("next-refused", (body, input, init) => {
      // A claim the server refuses for its own sake (here a kind name it cannot take).
      if (!body.includes('"next"')) return fetch(input, init);
      const sent = JSON.parse(body);
      return fetch(input, {
        ...init,
        body: JSON.stringify({ ...sent, next: { ...sent.next, kinds: ["no such kind!"] } }),
      });
    });
    try {
      await twoRunsSucceed(worker, "next-refused");
      // Each end asked for its claim (a refusal of the claim is not a server without `next`).
      expect(calls.filter((call) => call.startsWith("attempts") && call.includes('"next"'))).toHaveLength(2);
      expect(errors).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  it("fails a run once, saying why, when the server refuses its result (over the body limit), instead of running it again", async () => {
    let executions = 0;
    const errors: string[] = [];
    const worker = createWorker({
      baseUrl: url,
      workerId: "w-big",
      kinds: ["too-big"],
      waitSeconds: 1,
      onError: (error) => errors.push(error.message),
      handler: async () => {
        executions++;
        return { blob: "x".repeat(1_100_000) };
      },
    });
    worker.start();
    try {
      const { body: queued } = await api.enqueue({ kind: "too-big", maxAttempts: 3 });
      const run = await settled(queued.id);
      expect(run.status).toBe("failed");
      expect(run.attempts).toHaveLength(1);
      expect(run.attempts[0].error).toMatchObject({ code: "RESULT_REFUSED", retryable: false });
      expect(executions).toBe(1);
      expect(errors.some((message) => message.includes("413"))).toBe(true);
    } finally {
      await worker.stop();
    }
  });

  it("a result over the 512 KB result limit (under the body limit) settles the run, stored cut and marked", async () => {
    let executions = 0;
    const worker = createWorker({
      baseUrl: url,
      workerId: "w-large",
      kinds: ["large"],
      waitSeconds: 1,
      handler: async () => {
        executions++;
        return { blob: "x".repeat(600 * 1024) };
      },
    });
    worker.start();
    try {
      const { body: queued } = await api.enqueue({ kind: "large", maxAttempts: 3 });
      const run = await settled(queued.id);
      expect(run.status).toBe("succeeded");
      expect(run.output).toMatchObject({ truncated: true, reason: "too-large" });
      expect(executions).toBe(1);
    } finally {
      await worker.stop();
    }
  });

  it("retries a claim whose answer cannot be read, and keeps heartbeating past a call that hangs", async () => {
    let claims = 0;
    let heartbeats = 0;
    const errors: string[] = [];
    const flaky: typeof fetch = async (input, init) => {
      const target = String(input);
      if (target.includes("/claim") && ++claims === 1)
        return new Response("<html>proxy</html>", { status: 200 });
      if (target.includes("/heartbeat") && ++heartbeats === 1) {
        // Never answered: only the client's own timeout ends it.
        return new Promise((_, reject) =>
          init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)),
        );
      }
      return fetch(input, init);
    };
    const worker = createWorker({
      baseUrl: url,
      workerId: "w-flaky",
      kinds: ["flaky-net"],
      // Outside what the server takes: kept within it rather than refused forever.
      waitSeconds: 60,
      leaseSeconds: 1,
      requestTimeoutMs: 250,
      fetch: flaky,
      onError: (error) => errors.push(error.message),
      // Runs well past the lease: only heartbeats after the hung one keep it.
      handler: () => new Promise((resolve) => setTimeout(() => resolve({ ok: true }), 2_500)),
    });
    worker.start();
    try {
      const { body: queued } = await api.enqueue({ kind: "flaky-net" });
      const run = await settled(queued.id);
      expect(run.status).toBe("succeeded");
      expect(run.attempts).toHaveLength(1);
      expect(claims).toBeGreaterThan(1);
      expect(heartbeats).toBeGreaterThan(2);
      expect(errors.some((message) => message.includes("not JSON"))).toBe(true);
    } finally {
      await worker.stop();
    }
  });
});
