import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/app/create-app.js";
import { engineOf } from "../helpers/engine.js";
import { ACME, type InProcess, inProcessApp, webhookInit } from "./helpers/in-process.js";

let t: InProcess;
beforeEach(async () => {
  t = await inProcessApp();
});
afterEach(async () => {
  await t.close();
});

const json = (value: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(value),
});

async function expectProblem(response: Response, status: number, code: string) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toBe("application/problem+json");
  const body = (await response.json()) as Record<string, unknown>;
  expect(body).toMatchObject({ type: `urn:finality:problem:${code}`, status, code });
  expect(typeof body.title).toBe("string");
  expect(typeof body.detail).toBe("string");
  return body;
}

describe("errors are application/problem+json with a stable type", () => {
  it("404 for an unknown job, an unknown route and an unknown provider", async () => {
    await expectProblem(await t.app.request("/v1/jobs/acme/nope"), 404, "not-found");
    await expectProblem(await t.app.request("/v2/anything"), 404, "not-found");
    const body = await expectProblem(
      await t.app.request("/webhooks/nobody", webhookInit("{}")),
      404,
      "unknown-provider",
    );
    expect(body.provider).toBe("nobody");
  });

  it("405 with an Allow header for other methods", async () => {
    const cases: [string, string, string][] = [
      ["/webhooks/acme", "PUT", "POST"],
      ["/webhooks/acme", "GET", "POST"],
      ["/v1/jobs", "DELETE", "GET, HEAD, POST"],
      ["/v1/jobs/acme/x", "POST", "GET, HEAD"],
      ["/healthz", "POST", "GET, HEAD"],
    ];
    for (const [path, method, allow] of cases) {
      const response = await t.app.request(path, { method });
      expect(response.headers.get("allow")).toBe(allow);
      await expectProblem(response, 405, "method-not-allowed");
    }
  });

  it("413 above the body limit, with or without a content-length", async () => {
    const small = await inProcessApp({ server: { bodyLimitBytes: 64 }, providers: { acme: ACME } });
    try {
      const body = JSON.stringify({ jobId: "x", state: "running", result: "y".repeat(100) });
      const declared = webhookInit(body);
      (declared.headers as Record<string, string>)["content-length"] = String(body.length);
      await expectProblem(await small.app.request("/webhooks/acme", declared), 413, "payload-too-large");
      // app.request() sends a Request without content-length: the streamed, counted path.
      await expectProblem(
        await small.app.request("/webhooks/acme", webhookInit(body)),
        413,
        "payload-too-large",
      );
      await expectProblem(
        await small.app.request("/v1/jobs", json({ provider: "acme", id: "z".repeat(80) })),
        413,
        "payload-too-large",
      );
      expect((await small.finality.listJobs()).items).toEqual([]);
    } finally {
      await small.close();
    }
  });

  it("400 for a signed webhook that is not JSON or not the generic shape, naming the field", async () => {
    await expectProblem(
      await t.app.request("/webhooks/acme", webhookInit("{nope")),
      400,
      "invalid-observation",
    );
    const cases: [unknown, string][] = [
      [[], "(root)"],
      [{ state: "running" }, "jobId"],
      [{ jobId: "a", state: 3 }, "state"],
      [{ jobId: "a", state: "running", seq: -1 }, "seq"],
      [{ jobId: "a", state: "running", seq: 1.5 }, "seq"],
      [{ jobId: "a", state: "running", updateTime: "yesterday" }, "updateTime"],
      [{ jobId: "a\u0000b", state: "running" }, "jobId"],
    ];
    for (const [value, field] of cases) {
      const body = await expectProblem(
        await t.app.request("/webhooks/acme", webhookInit(JSON.stringify(value))),
        400,
        "invalid-observation",
      );
      expect(body.field).toBe(field);
    }
    expect((await t.finality.listJobs()).items).toEqual([]);
  });

  it("400 for bad registrations and queries; 404 for a provider that is not configured", async () => {
    await expectProblem(await t.app.request("/v1/jobs", json({ provider: "acme" })), 400, "invalid-request");
    await expectProblem(
      await t.app.request("/v1/jobs", { method: "POST", body: "{" }),
      400,
      "invalid-request",
    );
    await expectProblem(
      await t.app.request("/v1/jobs", json({ provider: "other", id: "1" })),
      404,
      "unknown-provider",
    );
    await expectProblem(await t.app.request("/v1/jobs?limit=0"), 400, "invalid-request");
    await expectProblem(await t.app.request("/v1/jobs?stuck=maybe"), 400, "invalid-request");
    await expectProblem(await t.app.request("/v1/jobs?staet=running"), 400, "invalid-request");
    await expectProblem(await t.app.request("/v1/jobs/acme/%E0%A4%A"), 400, "invalid-request");
  });

  it("an unexpected error is a 500 problem without its message, and is logged", async () => {
    const { store } = engineOf(t.finality);
    vi.spyOn(store, "listJobs").mockRejectedValueOnce(new Error("secret internals"));
    const app = createApp({
      finality: t.finality,
      config: t.config,
      receivers: new Map(),
      logger: { ...console, error: (f) => t.logged.push({ level: "error", fields: f }) },
    });
    const body = await expectProblem(await app.request("/v1/jobs"), 500, "internal");
    expect(JSON.stringify(body)).not.toContain("secret internals");
    expect(t.logged.some((l) => l.level === "error")).toBe(true);
  });
});

describe("the JSON API", () => {
  it("registers, reads and lists jobs; ids may contain '/', raw or encoded", async () => {
    const created = await t.app.request(
      "/v1/jobs",
      json({ provider: "acme", id: "operations/abc", kind: "video", metadata: { a: 1 } }),
    );
    expect(created.status).toBe(201);
    const job = (await created.json()) as Record<string, string>;
    expect(Object.keys(job)).toEqual(
      expect.arrayContaining([
        "provider",
        "id",
        "kind",
        "state",
        "version",
        "submittedAt",
        "settledAt",
        "settledBy",
        "pollAttempts",
        "stuck",
        "conflict",
        "metadata",
        "result",
        "error",
      ]),
    );
    expect(job).toMatchObject({ provider: "acme", id: "operations/abc", state: "pending", settledAt: null });
    expect(new Date(String(job.submittedAt)).toISOString()).toBe(job.submittedAt);

    for (const path of ["/v1/jobs/acme/operations%2Fabc", "/v1/jobs/acme/operations/abc"]) {
      const response = await t.app.request(path);
      expect(response.status).toBe(200);
      expect(await response.json()).toMatchObject({
        id: "operations/abc",
        kind: "video",
        metadata: { a: 1 },
      });
    }
    const events = (await (await t.app.request("/v1/jobs/acme/operations/abc/events")).json()) as {
      items: unknown[];
    };
    expect(events.items).toHaveLength(1);
    expect(events.items[0]).toMatchObject({ source: "api", state: "pending", applied: true });

    // A job whose id ends in "/events" is reached with its slash encoded.
    await t.app.request("/v1/jobs", json({ provider: "acme", id: "a/events" }));
    expect(await (await t.app.request("/v1/jobs/acme/a%2Fevents")).json()).toMatchObject({ id: "a/events" });
    await expectProblem(await t.app.request("/v1/jobs/acme/a/events"), 404, "not-found");
  });

  it("filters and pages the list", async () => {
    for (let n = 0; n < 5; n++)
      await t.app.request("/v1/jobs", json({ provider: "acme", id: `j${n}`, kind: n % 2 ? "odd" : "even" }));
    await t.app.request("/webhooks/acme", webhookInit(JSON.stringify({ jobId: "j0", state: "succeeded" })));
    const list = async (query: string) =>
      (await (await t.app.request(`/v1/jobs?${query}`)).json()) as {
        items: { id: string }[];
        nextCursor: string | null;
      };
    expect((await list("state=succeeded")).items.map((j) => j.id)).toEqual(["j0"]);
    expect((await list("kind=odd")).items.map((j) => j.id).sort()).toEqual(["j1", "j3"]);
    expect((await list("provider=acme&stuck=false")).items).toHaveLength(5);
    const first = await list("limit=2");
    expect(first.items).toHaveLength(2);
    const second = await list(`limit=2&cursor=${first.nextCursor}`);
    const third = await list(`limit=2&cursor=${second.nextCursor}`);
    expect([...first.items, ...second.items, ...third.items].map((j) => j.id).sort()).toEqual([
      "j0",
      "j1",
      "j2",
      "j3",
      "j4",
    ]);
    expect(third.nextCursor).toBeNull();
  });

  it("requires the bearer token on /v1 when one is configured (not on webhooks or health)", async () => {
    const token = "a-token-of-sixteen-chars";
    const guarded = await inProcessApp({ server: { apiToken: token }, providers: { acme: ACME } });
    try {
      const without = await guarded.app.request("/v1/jobs");
      expect(without.headers.get("www-authenticate")).toContain("Bearer");
      await expectProblem(without, 401, "unauthorized");
      await expectProblem(
        await guarded.app.request("/v1/jobs", { headers: { authorization: `Bearer ${token}x` } }),
        401,
        "unauthorized",
      );
      await expectProblem(
        await guarded.app.request("/v1/jobs", { headers: { authorization: token } }),
        401,
        "unauthorized",
      );
      expect(
        (await guarded.app.request("/v1/jobs", { headers: { authorization: `Bearer ${token}` } })).status,
      ).toBe(200);
      // The scheme name is case-insensitive (RFC 9110 §11.1); spaces around the token do not matter.
      for (const header of [`bearer ${token}`, `BEARER  ${token}`, `Bearer ${token} `])
        expect(
          (await guarded.app.request("/v1/jobs", { headers: { authorization: header } })).status,
          header,
        ).toBe(200);
      await expectProblem(
        await guarded.app.request("/v1/jobs", { headers: { authorization: `Basic ${token}` } }),
        401,
        "unauthorized",
      );
      expect((await guarded.app.request("/healthz")).status).toBe(200);
      const hook = await guarded.app.request(
        "/webhooks/acme",
        webhookInit(JSON.stringify({ jobId: "w", state: "running" })),
      );
      expect(hook.status).toBe(200);
    } finally {
      await guarded.close();
    }
  });
});

describe("operations", () => {
  it("healthz, readyz, and readyz turns 503 once the store is closed", async () => {
    expect(await (await t.app.request("/healthz")).json()).toEqual({ status: "ok" });
    expect((await t.app.request("/healthz", { method: "HEAD" })).status).toBe(200);
    expect(await (await t.app.request("/readyz")).json()).toEqual({ status: "ready" });
    await t.finality.close();
    await expectProblem(await t.app.request("/readyz"), 503, "store-unavailable");
  });

  it("/metrics counts webhooks by outcome, ingest latency, events, open jobs and anomalies", async () => {
    await t.app.request("/v1/jobs", json({ provider: "acme", id: "m1" }));
    await t.app.request("/webhooks/acme", webhookInit(JSON.stringify({ jobId: "m1", state: "succeeded" })));
    await t.app.request("/webhooks/acme", webhookInit(JSON.stringify({ jobId: "m1", state: "failed" })));
    await t.app.request("/webhooks/acme", webhookInit(JSON.stringify({ jobId: "m2", state: "running" })));
    await t.app.request("/webhooks/acme", { method: "POST", body: "{}" });
    const response = await t.app.request("/metrics");
    expect(response.headers.get("content-type")).toContain("text/plain");
    const text = await response.text();
    for (const line of [
      'finality_webhooks_received_total{provider="acme",outcome="applied"} 2',
      'finality_webhooks_received_total{provider="acme",outcome="conflicting-terminal"} 1',
      'finality_webhooks_received_total{provider="acme",outcome="signature-invalid"} 1',
      'finality_events_applied_total{source="webhook"} 2',
      'finality_events_ignored_total{source="webhook",reason="conflicting-terminal"} 1',
      "finality_ingest_duration_seconds_count 3",
      "finality_open_jobs 1",
      'finality_anomalies{kind="conflict"} 1',
      'finality_jobs{state="succeeded"} 1',
    ])
      expect(text).toContain(line);
    expect(text).toMatch(
      /finality_http_requests_total\{route="\/webhooks\/:provider",method="POST",status="401"\} 1/,
    );
  });

  it("logs one line per request, without bodies, headers or secrets", async () => {
    const body = JSON.stringify({ jobId: "quiet", state: "running", result: "private-result" });
    await t.app.request("/webhooks/acme", webhookInit(body));
    await t.app.request("/webhooks/acme", {
      method: "POST",
      headers: { "webhook-signature": "v1,abc" },
      body,
    });
    expect(t.logged).toHaveLength(2);
    expect(t.logged[0]).toMatchObject({
      level: "info",
      fields: { status: 200, provider: "acme", jobId: "quiet", outcome: "applied" },
    });
    expect(t.logged[1]).toMatchObject({
      level: "warn",
      fields: { status: 401, outcome: "signature-invalid", reason: "missing-headers" },
    });
    const text = JSON.stringify(t.logged);
    for (const secret of ["private-result", "whsec_", "v1,"]) expect(text).not.toContain(secret);
  });
});

describe("the first hour: invalid input is refused, not guessed at", () => {
  it("POST /v1/jobs with a misspelt key is a 400 naming it, with the key it meant; nothing is stored", async () => {
    const body = await expectProblem(
      await t.app.request("/v1/jobs", json({ provider: "acme", id: "typo-1", kidn: "video" })),
      400,
      "invalid-request",
    );
    expect(body.field).toBe("kidn");
    expect(body.detail).toBe('kidn: unknown field (did you mean "kind"?)');
    expect(await t.finality.getJob({ provider: "acme", id: "typo-1" })).toBeNull();
  });

  it("a cursor the server never gave is a 400 on every list, not the first page", async () => {
    await t.finality.register({ provider: "acme", id: "listed" });
    for (const path of ["/v1/jobs", "/v1/effects"]) {
      for (const cursor of ["garbage", "MA", "LTE"]) {
        const body = await expectProblem(
          await t.app.request(`${path}?cursor=${cursor}`),
          400,
          "invalid-request",
        );
        expect(body.field, `${path} ${cursor}`).toBe("cursor");
      }
    }
    const first = (await (await t.app.request("/v1/jobs?limit=1")).json()) as { nextCursor: string | null };
    expect(first.nextCursor).toBeNull();
  });
});
