import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { problemSchema } from "../../src/http/api-schemas.js";
import { buildOpenApiDocument } from "../../src/http/openapi/openapi-document.js";
import { routeDocs } from "../../src/http/openapi/route-docs.js";
import { problemType } from "../../src/http/problem.js";
import { settlementSchema } from "../../src/http/settlement-api-schemas.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { openApiApp, toHonoPath } from "./openapi-app.js";

// The document against the OpenAPI 3.1 schema, against the routes the app really serves (both
// ways), and real answers against the schemas the document was made from.

type Built = Awaited<ReturnType<typeof openApiApp>>;
let built: Built;
beforeAll(async () => {
  built = await openApiApp();
});
afterAll(() => built.close());

/** The operations the app serves as `METHOD pattern`: no middleware, no 405 catch-alls, no pages. */
function servedOperations(b: Built): string[] {
  const pages = new Set(b.dashboardRoutes.map((r) => `${r.method} ${r.path}`));
  return [
    ...new Set(
      b.app.routes
        .filter((r) => r.method !== "ALL" && !pages.has(`${r.method} ${r.path}`))
        .map((r) => `${r.method} ${r.path}`),
    ),
  ].sort();
}

function documentedOperations(document: Record<string, unknown>): string[] {
  const served = new Map(routeDocs({ runs: true }).map((d) => [`${d.method} ${d.path}`, d.servedBy]));
  const paths = document.paths as Record<string, Record<string, unknown>>;
  const operations = Object.entries(paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => {
      const pattern = served.get(`${method} ${path}`) ?? toHonoPath(path);
      return `${method.toUpperCase()} ${pattern}`;
    }),
  );
  return [...new Set(operations)].sort();
}

describe("/openapi.json", () => {
  it("is a valid OpenAPI 3.1 document, served by the app", async () => {
    const response = await built.app.request("/openapi.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("application/json");
    const document = (await response.json()) as Record<string, unknown>;
    expect(document.openapi).toMatch(/^3\.1\./);
    const result = await validate(structuredClone(document) as never);
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
    expect(result.warnings).toEqual([]);
  });

  it("the validator refuses a broken document (the check above can fail)", async () => {
    const document = buildOpenApiDocument({ runs: true }) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const job = document.paths["/v1/jobs/{provider}/{id}"] as { get: { parameters: unknown[] } };
    job.get.parameters = []; // a path template without its parameters
    const result = await validate(document as never);
    expect(result.valid).toBe(false);
  });

  it("describes every route the app serves, and serves every route it describes", async () => {
    const document = (await (await built.app.request("/openapi.json")).json()) as Record<string, unknown>;
    const served = servedOperations(built);
    expect(served.length).toBeGreaterThan(20);
    expect(served).toContain("POST /v1/workers/:workerId/claim");
    expect(documentedOperations(document)).toEqual(served);
  });

  it("without runs, neither serves nor describes the runs and worker routes", async () => {
    const bare = await openApiApp({ runs: false });
    try {
      const document = (await (await bare.app.request("/openapi.json")).json()) as Record<string, unknown>;
      const served = servedOperations(bare);
      expect(served.some((op) => op.includes("/v1/runs"))).toBe(false);
      expect(documentedOperations(document)).toEqual(served);
    } finally {
      await bare.close();
    }
  });

  it("lists each operation's problem types and security, and the effect payload under webhooks", () => {
    const document = buildOpenApiDocument({ runs: true });
    const claim = dig(document, "paths", "/v1/workers/{workerId}/claim", "post");
    expect(dig(claim, "security")).toEqual([{ workerPoolToken: [] }]);
    const heartbeat = dig(document, "paths", "/v1/attempts/{id}/heartbeat", "post");
    expect(JSON.stringify(dig(heartbeat, "responses", "409"))).toContain(problemType("stale-generation"));
    const register = dig(document, "paths", "/v1/jobs", "post");
    expect(dig(register, "security")).toEqual([{ apiToken: [] }]);
    expect(JSON.stringify(dig(register, "responses", "401"))).toContain(problemType("unauthorized"));
    expect(JSON.stringify(dig(register, "responses", "400"))).toContain(problemType("invalid-request"));
    const webhook = dig(document, "webhooks", "effect", "post", "requestBody");
    expect(JSON.stringify(webhook)).toContain("#/components/schemas/EffectPayload");
    const schemas = dig(document, "components", "schemas");
    expect(dig(schemas, "EffectPayload", "required")).toEqual([
      "type",
      "effect",
      "idempotencyKey",
      "attempt",
      "job",
    ]);
    expect(dig(schemas, "Job", "required")).toEqual(
      expect.arrayContaining(["lastPollError", "lastPolledAt"]),
    );
  });
});

describe("/docs/api", () => {
  it("serves the page and Swagger UI's files with the CSP; an unknown file is a 404 problem", async () => {
    const page = await built.app.request("/docs/api");
    expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(await page.text()).toContain('<script src="/docs/api/swagger-ui-bundle.js"></script>');
    const bundle = await built.app.request("/docs/api/swagger-ui-bundle.js");
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-type")).toContain("text/javascript");
    expect((await bundle.arrayBuffer()).byteLength).toBeGreaterThan(100_000);
    const missing = await built.app.request("/docs/api/package.json");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("content-type")).toContain("application/problem+json");
  });

  it("without a file reader (the Workers host) the files are 404s, and the document still answers", async () => {
    const bare = await openApiApp({ assets: false });
    try {
      expect((await bare.app.request("/docs/api/swagger-ui.css")).status).toBe(404);
      expect((await bare.app.request("/docs/api/init.js")).status).toBe(200);
      expect((await bare.app.request("/openapi.json")).status).toBe(200);
    } finally {
      await bare.close();
    }
  });
});

/** The value at `keys` under `value`; fails the test where one is missing. */
function dig(value: unknown, ...keys: string[]): unknown {
  let at = value;
  for (const key of keys) {
    if (typeof at !== "object" || at === null || !(key in at)) throw new Error(`no ${keys.join(" > ")}`);
    at = (at as Record<string, unknown>)[key];
  }
  return at;
}

/** The schema the document gives `operationId`'s answer with this status. */
function answerSchema(operationId: string, status: number) {
  const doc = routeDocs({ runs: true }).find((d) => d.operationId === operationId);
  const schema = doc?.responses[status]?.schema;
  if (!schema) throw new Error(`${operationId} describes no ${status}`);
  return schema;
}

/**
 * The JSON Schema the served document gives `operationId`'s answer with this status, turned back
 * into a validator (`z.fromJSONSchema`), so that the conversion itself is checked too.
 */
async function documentedSchema(operationId: string, status: number, contentType = "application/json") {
  const document = (await (await built.app.request("/openapi.json")).json()) as Record<string, unknown>;
  const local = JSON.parse(JSON.stringify(document).replaceAll("#/components/schemas/", "#/$defs/"));
  const paths = local.paths as Record<string, Record<string, { operationId: string; responses: unknown }>>;
  const operation = Object.values(paths)
    .flatMap((methods) => Object.values(methods))
    .find((op) => op.operationId === operationId);
  const schema = dig(operation, "responses", String(status), "content", contentType, "schema") as object;
  return z.fromJSONSchema({ ...schema, $defs: dig(local, "components", "schemas") } as never);
}

/** Calls the app and checks the answer against what the document says of it, both ways. */
async function call(
  operationId: string,
  path: string,
  init: RequestInit = {},
  status = 200,
): Promise<unknown> {
  const response = await built.app.request(path, {
    ...init,
    headers: { "content-type": "application/json", ...(init.headers as Record<string, string>) },
  });
  const body = await response.json();
  expect(response.status, JSON.stringify(body)).toBe(status);
  const described = (await documentedSchema(operationId, status)).safeParse(body);
  expect(described.success, `${operationId}: ${described.error?.message}`).toBe(true);
  return answerSchema(operationId, status).parse(body);
}

const post = (body: unknown): RequestInit => ({ method: "POST", body: JSON.stringify(body) });

describe("real answers parse with the described schemas", () => {
  it("jobs, webhooks, effects and parked observations", async () => {
    await call("registerJob", "/v1/jobs", post({ provider: "acme", id: "doc/1", kind: "render" }), 201);
    await call("registerJob", "/v1/jobs", post({ provider: "acme", id: "doc/1" }), 200);
    const body = JSON.stringify({ jobId: "doc/1", state: "running", seq: 1, result: { frames: 3 } });
    await call("receiveWebhook", "/webhooks/acme", { method: "POST", body, headers: signWith(SECRET, body) });
    await call("observeJob", "/v1/jobs/acme/doc%2F1/observations", post({ state: "succeeded", result: 1 }));
    await call("getJob", "/v1/jobs/acme/doc%2F1");
    await call("listJobs", "/v1/jobs?limit=5");
    const events = (await call("listJobEvents", "/v1/jobs/acme/doc%2F1/events")) as { items: unknown[] };
    expect(events.items).toHaveLength(4); // two registrations, the webhook, the observation
    await call("replayJobEffects", "/v1/jobs/acme/doc%2F1/replay-effects", { method: "POST" });
    await call("listEffects", "/v1/effects");
    await call("listParked", "/v1/parked");
    await call("health", "/healthz");
    await call("ready", "/readyz");
  });

  it("runs and the worker API", async () => {
    const run = (await call("enqueueRun", "/v1/runs", post({ kind: "render", input: { n: 1 } }), 201)) as {
      id: string;
    };
    const claim = (await call("claimRun", "/v1/workers/w-1/claim", post({ kinds: ["render"] }))) as {
      attempt: { id: string; generation: number };
    };
    const { id, generation } = claim.attempt;
    await call("heartbeat", `/v1/attempts/${id}/heartbeat`, post({ generation }));
    await call(
      "reportAttemptEvent",
      `/v1/attempts/${id}/events`,
      post({ generation, sequence: 1, type: "started" }),
    );
    await call("getRun", `/v1/runs/${run.id}`);
    await call("listRuns", "/v1/runs");
    await call("listRunEvents", `/v1/runs/${run.id}/events`);
    await call("cancelRun", `/v1/runs/${run.id}/cancel`, { method: "POST" });
  });

  it("the settlement feed: a page, a long poll, the stream's events and a bad cursor", async () => {
    await call("registerJob", "/v1/jobs", post({ provider: "acme", id: "feed/1", kind: "render" }), 201);
    await call("observeJob", "/v1/jobs/acme/feed%2F1/observations", post({ state: "failed", error: "x" }));
    const page = (await call("listSettlements", "/v1/settlements?provider=acme&limit=1000")) as {
      items: { id: string; cursor: string }[];
      cursor: string;
    };
    const settled = page.items.find((item) => item.id === "feed/1");
    expect(settled).toMatchObject({ state: "failed", settledBy: "api", job: { id: "feed/1" } });
    expect(page.cursor).toBe(page.items.at(-1)?.cursor);
    // A long poll after the last cursor: nothing newer, so an empty page that keeps the cursor.
    const after = encodeURIComponent(page.cursor);
    expect(await call("listSettlements", `/v1/settlements?after=${after}&wait=0`)).toEqual({
      items: [],
      cursor: page.cursor,
    });

    const stream = await built.app.request("/v1/settlements/stream?provider=acme");
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const event = await firstEvent(stream);
    expect(event.event).toBe("settlement");
    const first = settlementSchema.parse(JSON.parse(event.data ?? "null"));
    expect(event.id).toBe(first.cursor);
    expect(first).toEqual(settlementSchema.parse(page.items[0]));

    const bad = await built.app.request("/v1/settlements?after=not-a-cursor");
    expect(bad.status).toBe(400);
    const problem = await bad.json();
    expect(
      (await documentedSchema("listSettlements", 400, "application/problem+json")).safeParse(problem).success,
    ).toBe(true);
    const badResume = await built.app.request("/v1/settlements/stream", {
      headers: { "last-event-id": "nope" },
    });
    expect(badResume.status).toBe(400);
    expect(await badResume.json()).toMatchObject({ code: "invalid-request", field: "Last-Event-ID" });
  });

  it("intents: recorded, read, listed, attached; a reused key is a conflict the document lists", async () => {
    const intent = { provider: "acme", key: "doc-intent/1", kind: "render", metadata: { order: 17 } };
    const recorded = (await call("recordIntent", "/v1/intents", post(intent), 201)) as { status: string };
    expect(recorded.status).toBe("open");
    await call("recordIntent", "/v1/intents", post({ ...intent, metadata: { order: 17 } }), 200);
    await call("getIntent", "/v1/intents/doc-intent%2F1");
    await call("listIntents", "/v1/intents?status=open&limit=5");
    const attached = (await call(
      "attachIntent",
      "/v1/intents/doc-intent%2F1/attach",
      post({ id: "j-1" }),
    )) as {
      status: string;
      job: { kind: string };
    };
    expect(attached).toMatchObject({ status: "attached", jobId: "j-1", job: { kind: "render" } });
    await call("attachIntent", "/v1/intents/doc-intent%2F1/attach", post({ id: "j-1" }));
    const read = (await call("getIntent", "/v1/intents/doc-intent%2F1")) as { attachedBy: string };
    expect(read.attachedBy).toBe("api");
    await call("listIntents", "/v1/intents?status=attached");

    const reused = await built.app.request("/v1/intents", post({ ...intent, kind: "other" }));
    expect(reused.status).toBe(409);
    const problem = (await reused.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ code: "conflict", reason: "intent-key-reused" });
    expect(
      (await documentedSchema("recordIntent", 409, "application/problem+json")).safeParse(problem).success,
    ).toBe(true);
    const unknown = await built.app.request("/v1/intents", post({ ...intent, provider: "nope", key: "k-2" }));
    const unknownProblem = (await unknown.json()) as Record<string, unknown>;
    expect([unknown.status, unknownProblem.code]).toEqual([404, "unknown-provider"]);
    const described = await documentedSchema("recordIntent", unknown.status, "application/problem+json");
    expect(described.safeParse(unknownProblem).success).toBe(true);
    // The answer schema is strict: a field intentToJson gained and the schema did not is refused.
    expect(answerSchema("getIntent", 200).safeParse({ ...read, extra: 1 }).success).toBe(false);
    expect(answerSchema("attachIntent", 200).safeParse({ ...attached, extra: 1 }).success).toBe(false);
  });

  it("a problem parses as one, with a type the operation lists for its status", async () => {
    const response = await built.app.request("/v1/attempts/nope/heartbeat", post({ generation: 1 }));
    expect(response.status).toBe(404);
    const body = (await response.json()) as Record<string, unknown>;
    expect(problemSchema.parse(body).type).toBe("urn:finality:problem:not-found");
    // The document's 404 for this operation: a Problem whose type is one it lists.
    const described = await documentedSchema("heartbeat", 404, "application/problem+json");
    expect(described.safeParse(body).success).toBe(true);
    expect(described.safeParse({ ...body, type: "urn:finality:problem:conflict" }).success).toBe(false);
  });

  it("a schema check that can fail: a missing field or one the schema does not know is refused", async () => {
    const job = answerSchema("getJob", 200);
    expect(() => job.parse({ provider: "acme" })).toThrow();
    const real = (await (await built.app.request("/v1/jobs/acme/doc%2F1")).json()) as Record<string, unknown>;
    expect(job.safeParse(real).success).toBe(true);
    expect(job.safeParse({ ...real, extra: 1 }).success).toBe(false);
    const described = await documentedSchema("getJob", 200);
    expect(described.safeParse(real).success).toBe(true);
    expect(described.safeParse({ ...real, extra: 1 }).success).toBe(false);
    expect(described.safeParse({ ...real, state: "done" }).success).toBe(false);
  });
});

/** The stream's first event (comments skipped); cancels the stream after it. */
async function firstEvent(response: Response): Promise<Record<string, string>> {
  const reader = (response.body as ReadableStream<Uint8Array>)
    .pipeThrough(new TextDecoderStream())
    .getReader();
  let text = "";
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) throw new Error(`the stream ended before an event: ${text}`);
      text += value;
      for (const block of text.split("\n\n").slice(0, -1)) {
        const fields = block.split("\n").filter((line) => line !== "" && !line.startsWith(":"));
        const event = Object.fromEntries(
          fields.map((line) => [line.slice(0, line.indexOf(":")), line.slice(line.indexOf(":") + 2)]),
        );
        if (event.data !== undefined) return event;
      }
    }
  } finally {
    await reader.cancel();
  }
}
