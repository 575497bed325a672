import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACME, type InProcess, inProcessApp } from "../http/helpers/in-process.js";
import { OTHER_SECRET, SECRET, signWith } from "../http/helpers/webhooks.js";
import { startWorkerLedger, type WorkerLedger } from "./helpers/worker-ledger.js";

interface Step {
  name: string;
  path: string;
  init: RequestInit;
}

const JOB = "op-1";

/** One sequence of requests, built once so that Node and the Worker get the very same bytes. */
function steps(): Step[] {
  const now = Math.floor(Date.now() / 1000);
  const webhook = (name: string, body: string, headers: Record<string, string>): Step => ({
    name,
    path: "/webhooks/acme",
    init: { method: "POST", headers, body },
  });
  const running = JSON.stringify({ jobId: JOB, state: "running", seq: 1 });
  const succeeded = JSON.stringify({ jobId: JOB, state: "succeeded", seq: 3, result: { url: "r" } });
  const late = JSON.stringify({ jobId: JOB, state: "running", seq: 2 });
  const succeededHeaders = signWith(SECRET, succeeded, { id: "msg-succeeded" });
  const unsigned = signWith(SECRET, running);
  delete unsigned["webhook-signature"];
  return [
    {
      name: "register",
      path: "/v1/jobs",
      init: {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ provider: "acme", id: JOB, kind: "video" }),
      },
    },
    webhook("good", running, signWith(SECRET, running)),
    webhook("tampered body", succeeded.replace("succeeded", "failed"), signWith(SECRET, succeeded)),
    webhook("wrong secret", succeeded, signWith(OTHER_SECRET, succeeded)),
    webhook("stale timestamp", succeeded, signWith(SECRET, succeeded, { timestampSeconds: now - 3600 })),
    webhook("future timestamp", succeeded, signWith(SECRET, succeeded, { timestampSeconds: now + 3600 })),
    webhook("no signature", running, unsigned),
    webhook("signed bad JSON", "{not json", signWith(SECRET, "{not json")),
    webhook("terminal", succeeded, succeededHeaders),
    webhook("duplicate delivery", succeeded, succeededHeaders),
    webhook("reordered: an older running after succeeded", late, signWith(SECRET, late)),
    { ...webhook("unknown provider", running, signWith(SECRET, running)), path: "/webhooks/nobody" },
  ];
}

/** What a client can see of an answer: status, problem or outcome, and the state it reports. */
async function answerOf(response: Response) {
  const type = response.headers.get("content-type") ?? "";
  const body = (await response.json()) as Record<string, unknown>;
  return {
    status: response.status,
    problem: type.startsWith("application/problem+json") ? body.code : null,
    outcome: body.outcome ?? null,
    applied: body.applied ?? null,
    state: body.state ?? null,
    reason: (body.reason as string | undefined) ?? null,
  };
}

async function run(send: (path: string, init: RequestInit) => Promise<Response>, sequence: Step[]) {
  const answers: Record<string, unknown> = {};
  for (const step of sequence) answers[step.name] = await answerOf(await send(step.path, step.init));
  const job = (await (await send(`/v1/jobs/acme/${JOB}`, {})).json()) as Record<string, unknown>;
  const events = (await (await send(`/v1/jobs/acme/${JOB}/events`, {})).json()) as {
    items: Record<string, unknown>[];
  };
  return {
    answers,
    job: { state: job.state, settledBy: job.settledBy, result: job.result, kind: job.kind },
    events: events.items.map((e) => ({
      source: e.source,
      state: e.state,
      applied: e.applied,
      reason: e.reason,
    })),
  };
}

describe("signed webhooks on Workers (workerd) and on Node", () => {
  let node: InProcess;
  let worker: WorkerLedger;
  beforeAll(async () => {
    node = await inProcessApp({ providers: { acme: ACME } });
    // On Workers the secret is a Worker secret binding, referenced from the configuration.
    worker = await startWorkerLedger(
      {
        providers: { acme: { type: "generic", webhook: { secrets: ["env:ACME_WEBHOOK_SECRET"] } } },
        log: { level: "error" },
      },
      { ACME_WEBHOOK_SECRET: SECRET },
    );
  });
  afterAll(async () => {
    await node?.close();
    await worker?.dispose();
  });

  it("give the same answers, states and audit trail for good, tampered, stale, duplicate and reordered deliveries", async () => {
    const sequence = steps();
    const onNode = await run(async (path, init) => node.app.request(path, init), sequence);
    const onWorker = await run((path, init) => worker.fetch(path, init), sequence);
    expect(onWorker).toEqual(onNode);

    // And those answers are the right ones, not merely the same.
    const answers = onWorker.answers as Record<string, Record<string, unknown>>;
    expect(answers.good).toMatchObject({ status: 200, outcome: "applied" });
    for (const refused of [
      "tampered body",
      "wrong secret",
      "stale timestamp",
      "future timestamp",
      "no signature",
    ])
      expect(answers[refused]).toMatchObject({ status: 401, problem: "signature-invalid" });
    expect(answers["signed bad JSON"]).toMatchObject({ status: 400 });
    expect(answers.terminal).toMatchObject({ status: 200, outcome: "applied" });
    expect(answers["duplicate delivery"]).toMatchObject({ status: 200, outcome: "duplicate-delivery" });
    expect(answers["reordered: an older running after succeeded"]).toMatchObject({
      status: 200,
      outcome: "lower-rank",
      applied: false,
    });
    expect(answers["unknown provider"]).toMatchObject({ status: 404, problem: "unknown-provider" });
    expect(onWorker.job).toMatchObject({ state: "succeeded", settledBy: "webhook", result: { url: "r" } });
  });

  it("answers health and the API from the Durable Object, and hides the internal tick route", async () => {
    expect((await worker.fetch("/healthz")).status).toBe(200);
    expect((await worker.fetch("/readyz")).status).toBe(200);
    const tick = await worker.fetch("/__finality/tick", { method: "POST" });
    expect(tick.status).toBe(404);
    expect(tick.headers.get("content-type")).toMatch(/^application\/problem\+json/);
  });

  it("made workerd throw nothing outside a handler (on Cloudflare such a throw restarts the isolate)", () => {
    expect(worker.runtimeLog.filter((line) => /uncaught exception/.test(line))).toEqual([]);
  });
});

describe("a Worker's API token", () => {
  it("is required: without it every request is refused with a problem naming server.apiToken", async () => {
    const worker = await startWorkerLedger({}, { FINALITY_API_TOKEN: "" });
    try {
      for (const path of ["/v1/jobs", "/healthz"]) {
        const response = await worker.fetch(path);
        expect(response.status).toBe(500);
        expect(await response.json()).toMatchObject({
          code: "invalid-config",
          detail: expect.stringContaining("server.apiToken"),
        });
      }
    } finally {
      await worker.dispose();
    }
  });

  it("guards the API: a missing or wrong bearer token is 401, the right one passes", async () => {
    const worker = await startWorkerLedger({ log: { level: "error" } });
    try {
      expect((await worker.fetch("/v1/jobs", { headers: { authorization: "" } })).status).toBe(401);
      expect((await worker.fetch("/v1/jobs", { headers: { authorization: "Bearer wrong" } })).status).toBe(
        401,
      );
      expect((await worker.fetch("/v1/jobs")).status).toBe(200);
    } finally {
      await worker.dispose();
    }
  });
});

describe("a Worker with a bad configuration", () => {
  it("refuses, naming the keys, what a Worker cannot offer (src/host/workers/unsupported-on-workers.ts)", async () => {
    const worker = await startWorkerLedger({
      store: { postgres: "postgres://127.0.0.1:5432/test" },
      telemetry: { otlpUrl: "http://127.0.0.1:4318/v1/traces" },
    });
    try {
      const response = await worker.fetch("/v1/jobs");
      expect(response.status).toBe(500);
      const problem = (await response.json()) as { code: string; detail: string };
      expect(problem.code).toBe("invalid-config");
      expect(problem.detail).toContain("store.postgres");
      expect(problem.detail).toContain("telemetry.otlpUrl");
    } finally {
      await worker.dispose();
    }
  });

  it("answers every request with a problem naming the field", async () => {
    const worker = await startWorkerLedger({ reconcile: { graceSeconds: "soon" } });
    try {
      const response = await worker.fetch("/v1/jobs");
      expect(response.status).toBe(500);
      expect(response.headers.get("content-type")).toMatch(/^application\/problem\+json/);
      expect(await response.json()).toMatchObject({
        code: "invalid-config",
        detail: expect.stringContaining("reconcile.graceSeconds"),
      });
    } finally {
      await worker.dispose();
    }
  });
});
