import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import type { AppEnv } from "../../src/http/app-env.js";
import { bearerAuth } from "../../src/http/bearer-auth.js";
import { bodyLimit } from "../../src/http/body-limit.js";
import { problemResponse, toProblem } from "../../src/http/problem.js";
import { requestLog, silentLogger } from "../../src/http/request-log.js";
import { addRunRoutes, addWorkerRoutes } from "../../src/http/run-routes.js";
import { noopMetrics } from "../../src/http/service-metrics.js";
import { createWorkerAuthorizer } from "../../src/http/worker-auth.js";
import { openEngine } from "./engine-harness.js";

const API_TOKEN = "api-token-0123456789";
const RENDER_TOKEN = "render-pool-token-0123";

/** The wiring the lead adds to createApp: worker routes before the API token middleware. */
function appFor(engine: ReturnType<typeof openEngine>) {
  const app = new Hono<AppEnv>();
  app.use(requestLog(silentLogger, noopMetrics));
  const authorizeWorker = createWorkerAuthorizer({ render: { token: RENDER_TOKEN, kinds: ["render"] } });
  app.use(bodyLimit(65_536));
  addWorkerRoutes(app, { runs: engine.runs, authorizeWorker });
  app.use("/v1/*", bearerAuth(API_TOKEN));
  addRunRoutes(app, { runs: engine.runs });
  app.onError((error) => problemResponse(toProblem(error).problem));
  return app;
}

const post = (token: string, body: unknown) => ({
  method: "POST",
  headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
  body: JSON.stringify(body),
});

describe("worker pool tokens", () => {
  it("workers use their pool token, not the API token; the application side needs the API token", async () => {
    const engine = openEngine();
    const app = appFor(engine);
    expect((await app.request("/v1/runs", post(RENDER_TOKEN, { kind: "render" }))).status).toBe(401);
    const created = await app.request("/v1/runs", post(API_TOKEN, { kind: "render" }));
    expect(created.status).toBe(201);
    expect((await app.request("/v1/workers/w1/claim", post(API_TOKEN, {}))).status).toBe(401);
    expect((await app.request("/v1/workers/w1/claim", post("", {}))).status).toBe(401);
    const claim = await app.request("/v1/workers/w1/claim", post(RENDER_TOKEN, {}));
    expect(claim.status).toBe(200);
    const { attempt } = (await claim.json()) as { attempt: { id: string; generation: number } };
    const beat = await app.request(
      `/v1/attempts/${attempt.id}/heartbeat`,
      post(RENDER_TOKEN, { generation: 1 }),
    );
    expect(await beat.json()).toMatchObject({ cancelRequested: false, status: "starting" });
  });

  it("a pool claims and touches only its kinds", async () => {
    const engine = openEngine();
    const app = appFor(engine);
    const outside = await app.request("/v1/workers/w1/claim", post(RENDER_TOKEN, { kinds: ["encode"] }));
    expect(outside.status).toBe(400);
    expect(await outside.json()).toMatchObject({ code: "invalid-request", field: "kinds" });
    await engine.runs.enqueue({ kind: "encode" });
    expect((await app.request("/v1/workers/w1/claim", post(RENDER_TOKEN, {}))).status).toBe(204);
    const other = (await engine.runs.claim({ workerId: "elsewhere" }))!;
    const touch = await app.request(
      `/v1/attempts/${other.attempt.id}/heartbeat`,
      post(RENDER_TOKEN, { generation: 1 }),
    );
    expect(touch.status).toBe(404);
  });

  it("without pools, anonymous workers are let in only when allowed", () => {
    expect(createWorkerAuthorizer({})("anything")).toBeNull();
    expect(createWorkerAuthorizer({}, { allowAnonymous: true })("")).toEqual({
      name: "default",
      kinds: null,
    });
    const pools = createWorkerAuthorizer({
      a: { token: "token-a-123" },
      b: { token: "token-b-456", kinds: [] },
    });
    expect(pools("token-b-456")).toEqual({ name: "b", kinds: null });
    expect(pools("token-a-12")).toBeNull();
  });
});
