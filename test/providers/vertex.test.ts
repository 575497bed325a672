import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { providerSchema } from "../../src/config/provider-config-schema.js";
import { sweepOptionsFromConfig } from "../../src/host/discovery-from-config.js";
import { sweepOnce } from "../../src/providers/discovery-sweep.js";
import { createNodeProviders } from "../../src/providers/node-providers.js";
import { createProviderHealth } from "../../src/providers/provider-health.js";
import {
  createServiceAccountTokenSource,
  type ServiceAccountKey,
} from "../../src/providers/vertex/service-account-token.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { VertexFake } from "../fakes/vertex-fake.js";
import { PROJECT_NUMBER, VERTEX_JOB_STATES, vertexJob, vertexJobName } from "../fakes/vertex-fixtures.js";
import { adapterFor, pollOnce } from "./helpers/adapter.js";
import { providerApp } from "./helpers/provider-app.js";

/** The clock of the fake and of the adapters: moved forward to make tokens near their expiry. */
let skewMs = 0;
const now = () => Date.now() + skewMs;
const fake = new VertexFake(now);
let base: string;
let restoreFetch: () => void;

beforeAll(async () => {
  restoreFetch = loopbackOnly();
  base = await fake.listen();
});
afterAll(async () => {
  await fake.close();
  restoreFetch();
});
afterEach(() => {
  skewMs = 0;
  fake.tokenFailure = null;
  fake.tokenLifetimeSeconds = 3600;
});

const config = (more: Record<string, unknown> = {}) => ({
  type: "vertex",
  project: "fake-project",
  location: "us-central1",
  baseUrl: base,
  serviceAccountKey: JSON.stringify(fake.keyFile()),
  ...more,
});

/** From the JobState reference (https://cloud.google.com/vertex-ai/docs/reference/rest/v1/JobState). */
const EXPECTED: Record<(typeof VERTEX_JOB_STATES)[number], string> = {
  JOB_STATE_QUEUED: "pending",
  JOB_STATE_PENDING: "pending",
  JOB_STATE_RUNNING: "running",
  JOB_STATE_UPDATING: "running",
  JOB_STATE_CANCELLING: "running",
  JOB_STATE_PAUSED: "running",
  JOB_STATE_SUCCEEDED: "succeeded",
  JOB_STATE_PARTIALLY_SUCCEEDED: "succeeded",
  JOB_STATE_FAILED: "failed",
  JOB_STATE_CANCELLED: "cancelled",
  JOB_STATE_EXPIRED: "expired",
};
const idOf = (state: string) => `map${state.replace("JOB_STATE_", "").replace("_", "").toLowerCase()}`;

describe("Vertex AI maps every JobState", () => {
  const adapter = () => adapterFor("vertex", config(), { now });

  it.each(VERTEX_JOB_STATES)("%s", async (state) => {
    fake.set(vertexJob(idOf(state), state));
    expect(await pollOnce(adapter(), vertexJobName(idOf(state)))).toMatchObject({
      kind: "observed",
      observation: { id: vertexJobName(idOf(state)), state: EXPECTED[state], rawState: state },
    });
  });

  it("keeps the output location and counts as the result, the rpc status as the error", async () => {
    const a = adapter();
    expect(await pollOnce(a, vertexJobName(idOf("JOB_STATE_PARTIALLY_SUCCEEDED")))).toMatchObject({
      observation: {
        result: {
          partial: true,
          completionStats: { successfulCount: "800", failedCount: "200" },
          outputInfo: { gcsOutputDirectory: expect.stringMatching(/^gs:\/\//) },
        },
      },
    });
    expect(await pollOnce(a, vertexJobName(idOf("JOB_STATE_FAILED")))).toMatchObject({
      observation: { error: { code: 3, message: expect.stringMatching(/not JSON Lines/) } },
    });
  });

  it("a job registered under the project id is the job Vertex names by project number", async () => {
    fake.set(vertexJob("byid", "JOB_STATE_RUNNING"));
    // The fake finds jobs by the exact name asked: answer the project-id name with the number's.
    fake.jobs.set(
      vertexJobName("byid", "us-central1", "fake-project"),
      vertexJob("byid", "JOB_STATE_RUNNING"),
    );
    const asked = vertexJobName("byid", "us-central1", "fake-project");
    expect(await pollOnce(adapter(), asked)).toMatchObject({ kind: "observed", observation: { id: asked } });
    fake.jobs.set(
      vertexJobName("other", "us-central1", "fake-project"),
      vertexJob("byid", "JOB_STATE_RUNNING"),
    );
    expect(await pollOnce(adapter(), vertexJobName("other", "us-central1", "fake-project"))).toMatchObject({
      kind: "failed",
      error: expect.stringMatching(/answered for/),
    });
  });

  it("a job of another location is refused without a call", async () => {
    const calls = fake.server.seen.length;
    expect(await pollOnce(adapter(), vertexJobName("x", "europe-west4"))).toMatchObject({
      kind: "failed",
      error: expect.stringMatching(/is in location europe-west4; this provider instance polls us-central1/),
    });
    expect(fake.server.seen.length).toBe(calls);
  });
});

describe("service account tokens", () => {
  it("one token serves many polls, and polls that start together wait for one exchange", async () => {
    fake.set(vertexJob("cached", "JOB_STATE_RUNNING"));
    const adapter = adapterFor("vertex", config(), { now });
    const before = fake.grants.length;
    await Promise.all(Array.from({ length: 5 }, () => pollOnce(adapter, vertexJobName("cached"))));
    for (let i = 0; i < 3; i++)
      expect(await pollOnce(adapter, vertexJobName("cached"))).toMatchObject({ kind: "observed" });
    expect(fake.grants.length - before).toBe(1);
    expect(fake.grants.at(-1)).toMatchObject({
      iss: fake.clientEmail,
      aud: fake.tokenUrl,
      scope: "https://www.googleapis.com/auth/cloud-platform",
    });
  });

  it("a caller that gives up waiting does not cancel the exchange the others share", async () => {
    const token = createServiceAccountTokenSource({
      key: fake.keyFile() as unknown as ServiceAccountKey,
      tokenUri: fake.tokenUrl,
      scope: "https://www.googleapis.com/auth/cloud-platform",
      now,
      refreshBeforeMs: 300_000,
      timeoutMs: 5_000,
    });
    const before = fake.grants.length;
    const gaveUp = new AbortController();
    gaveUp.abort(new Error("poll timed out"));
    const [first, second] = await Promise.allSettled([
      token(gaveUp.signal),
      token(AbortSignal.timeout(5_000)),
    ]);
    expect(first).toMatchObject({ status: "rejected", reason: { message: "poll timed out" } });
    expect(second).toMatchObject({ status: "fulfilled", value: { kind: "headers" } });
    expect(fake.grants.length - before).toBe(1);
  });

  it("a token is renewed before it expires (tokenRefreshBeforeSeconds), not after a refusal", async () => {
    fake.set(vertexJob("renewed", "JOB_STATE_RUNNING"));
    fake.tokenLifetimeSeconds = 600;
    const adapter = adapterFor("vertex", config({ tokenRefreshBeforeSeconds: 120 }), { now });
    const before = fake.grants.length;
    await pollOnce(adapter, vertexJobName("renewed"));
    skewMs = 470_000; // 130 s left: still used
    expect(await pollOnce(adapter, vertexJobName("renewed"))).toMatchObject({ kind: "observed" });
    expect(fake.grants.length - before).toBe(1);
    skewMs = 490_000; // 110 s left: renewed first, while the old one still works
    expect(await pollOnce(adapter, vertexJobName("renewed"))).toMatchObject({ kind: "observed" });
    expect(fake.grants.length - before).toBe(2);
  });

  it("a key the token endpoint refuses is a provider-health error that names the account, never the key", async () => {
    const health = createProviderHealth();
    const other = new VertexFake(now);
    await other.listen();
    try {
      // Another account's private key under this account's email: the signature does not verify.
      const forged = JSON.stringify(fake.keyFile({ private_key: other.keyFile().private_key as string }));
      const adapter = adapterFor("vertex", config({ serviceAccountKey: forged }), { now, health });
      fake.set(vertexJob("refused", "JOB_STATE_RUNNING"));
      const result = await pollOnce(adapter, vertexJobName("refused"));
      expect(result).toMatchObject({ kind: "failed", status: 400 });
      const failure = health.authFailures().get("vertex");
      expect(failure?.message).toBe(
        `vertex: the token endpoint refused the service account ${fake.clientEmail} (400, invalid_grant: Invalid JWT Signature.)`,
      );
      const pemBody = (other.keyFile().private_key as string).split("\n")[1] as string;
      expect(JSON.stringify(result) + failure?.message).not.toContain(pemBody);
    } finally {
      await other.close();
    }
  });

  it("a token endpoint that fails (503) fails the poll as retryable, not as a refused key", async () => {
    const health = createProviderHealth();
    fake.tokenFailure = 503;
    const result = await pollOnce(adapterFor("vertex", config(), { now, health }), vertexJobName("cached"));
    expect(result).toMatchObject({
      kind: "failed",
      error: expect.stringMatching(/no credentials for GET .*: the token endpoint answered 503/),
    });
    expect(health.authFailures().size).toBe(0);
  });

  it("a revoked token is a refusal the status API reports", async () => {
    const health = createProviderHealth();
    fake.set(vertexJob("revoked", "JOB_STATE_RUNNING"));
    const adapter = adapterFor("vertex", config(), { now, health });
    expect(await pollOnce(adapter, vertexJobName("revoked"))).toMatchObject({ kind: "observed" });
    fake.revokeTokens();
    expect(await pollOnce(adapter, vertexJobName("revoked"))).toMatchObject({ kind: "failed", status: 401 });
    expect(health.authFailures().get("vertex")?.message).toBe(
      "vertex: the status API refused the service account's token (401)",
    );
  });

  it("the configuration refuses a key that is not a service account key, without repeating it", () => {
    const parsed = providerSchema.safeParse(
      config({ serviceAccountKey: '{"client_email":"a@b","private_key":"s3cr3t-material"}' }),
    );
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toMatch(/must be a service account key/);
    expect(JSON.stringify(parsed.error?.issues)).not.toContain("s3cr3t-material");
    expect(providerSchema.safeParse(config({ serviceAccountKey: fake.keyFile() })).success).toBe(true);
  });

  it("the key's token_uri is used unless tokenUri is set", async () => {
    const wrongUri = JSON.stringify(fake.keyFile({ token_uri: "http://127.0.0.1:9/token" }));
    fake.set(vertexJob("uri", "JOB_STATE_RUNNING"));
    const overridden = adapterFor(
      "vertex",
      config({ serviceAccountKey: wrongUri, tokenUri: fake.tokenUrl }),
      { now },
    );
    expect(await pollOnce(overridden, vertexJobName("uri"))).toMatchObject({ kind: "observed" });
    const notOverridden = adapterFor("vertex", config({ serviceAccountKey: wrongUri }), { now });
    expect(await pollOnce(notOverridden, vertexJobName("uri"))).toMatchObject({
      kind: "failed",
      error: expect.stringMatching(/no credentials/),
    });
  });
});

describe("Vertex AI end to end, on SQLite", () => {
  it("a job nobody registered is found by discovery and settled by the reconciler's poll", async () => {
    const app = await providerApp({
      vertex: { ...config({ project: PROJECT_NUMBER }), discover: { enabled: true } },
    });
    try {
      const id = vertexJobName("found");
      fake.set(vertexJob("found", "JOB_STATE_RUNNING", { createTime: new Date().toISOString() }));
      const providers = createNodeProviders(app.config.providers, Date.now, { health: app.health });
      const [options] = sweepOptionsFromConfig(app.config, providers);
      expect(options).toMatchObject({ provider: "vertex", settleFromList: false });
      expect(await sweepOnce(app.finality, options!)).toMatchObject({ adopted: 1 });
      expect(await app.job("vertex", id)).toMatchObject({ kind: "batch_prediction" });
      fake.set(vertexJob("found", "JOB_STATE_EXPIRED", { createTime: new Date().toISOString() }));
      await app.reconciler.runOnce();
      expect(await app.job("vertex", id)).toMatchObject({ state: "expired", settledBy: "reconcile" });
    } finally {
      await app.close();
    }
  });

  it("a registered job whose id is not a resource name is refused; webhooks are refused", async () => {
    const app = await providerApp({ vertex: config() });
    try {
      await expect(app.register("vertex", "456")).rejects.toThrow(/answered 400.*resource name/);
      const response = await app.post("vertex", {
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(response).toMatchObject({ status: 401, body: { reason: "no-matching-signature" } });
    } finally {
      await app.close();
    }
  });
});

describe("Vertex credentials in the service", () => {
  it("a refused key is logged once as a configuration error, and no log line holds the key", async () => {
    const other = new VertexFake(now);
    await other.listen();
    const otherKey = other.keyFile().private_key as string;
    const app = await providerApp({
      vertex: config({ serviceAccountKey: JSON.stringify(fake.keyFile({ private_key: otherKey })) }),
    });
    try {
      fake.set(vertexJob("logged", "JOB_STATE_RUNNING"));
      await app.register("vertex", vertexJobName("logged"));
      await app.reconciler.runOnce();
      const errors = app.logs.filter((line) => line.level === "error");
      expect(errors).toHaveLength(1);
      expect(errors[0]).toMatchObject({
        fields: { provider: "vertex", status: 400, configError: true },
        message: expect.stringMatching(
          /^vertex: the token endpoint refused the service account .* invalid_grant/,
        ),
      });
      const body = otherKey.split("\n")[1] as string;
      expect(JSON.stringify(app.logs)).not.toContain(body);
    } finally {
      await app.close();
      await other.close();
    }
  });
});

describe("Vertex configuration reaches its users", () => {
  it("timeoutSeconds is the poll timeout; apiVersion is in the path", async () => {
    expect(adapterFor("vertex", config({ timeoutSeconds: 19 }), { now }).pollTimeoutMs).toBe(19_000);
    fake.set(vertexJob("versioned", "JOB_STATE_RUNNING"));
    await pollOnce(
      adapterFor("vertex", config({ apiVersion: "v1beta1" }), { now }),
      vertexJobName("versioned"),
    );
    expect(fake.server.seen.at(-1)?.path).toBe(`/v1beta1/${vertexJobName("versioned")}`);
  });

  it("without baseUrl, requests go to the location's endpoint", async () => {
    const { baseUrl: _fake, ...noBase } = config({ location: "europe-west4" });
    const result = await pollOnce(
      adapterFor("vertex", noBase, { now }),
      vertexJobName("abc", "europe-west4"),
    );
    expect(result).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("https://europe-west4-aiplatform.googleapis.com"),
    });
  });
});
