import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load-config.js";
import { providerSchema } from "../../src/config/provider-config-schema.js";
import { sweepOptionsFromConfig } from "../../src/host/discovery-from-config.js";
import { warnAboutUnsignedProviders } from "../../src/host/node/serve.js";
import { sweepOnce } from "../../src/providers/discovery-sweep.js";
import { createNodeProviders } from "../../src/providers/node-providers.js";
import { createProviderHealth } from "../../src/providers/provider-health.js";
import { BedrockFake } from "../fakes/bedrock-fake.js";
import { BEDROCK_STATUSES, bedrockJob, jobArn } from "../fakes/bedrock-fixtures.js";
import { loopbackOnly } from "../fakes/loopback-only.js";
import { adapterFor, pollOnce } from "./helpers/adapter.js";
import { providerApp } from "./helpers/provider-app.js";

const fake = new BedrockFake();
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

const config = (more: Record<string, unknown> = {}) => ({
  type: "bedrock",
  region: fake.region,
  baseUrl: base,
  accessKeyId: fake.accessKeyId,
  secretAccessKey: fake.secretAccessKey,
  ...more,
});

/** From the ModelInvocationJobStatus descriptions in the API reference, not from the adapter's table. */
const EXPECTED: Record<(typeof BEDROCK_STATUSES)[number], string> = {
  Submitted: "pending",
  Validating: "pending",
  Scheduled: "pending",
  InProgress: "running",
  Stopping: "running",
  Stopped: "cancelled",
  PartiallyCompleted: "succeeded",
  Completed: "succeeded",
  Failed: "failed",
  Expired: "expired",
};

describe("Bedrock maps every documented status", () => {
  it.each(BEDROCK_STATUSES)("%s", async (status) => {
    fake.set(bedrockJob(`map${status.toLowerCase()}`, status));
    const result = await pollOnce(adapterFor("bedrock", config()), jobArn(`map${status.toLowerCase()}`));
    expect(result).toMatchObject({
      kind: "observed",
      observation: { id: jobArn(`map${status.toLowerCase()}`), state: EXPECTED[status], rawState: status },
    });
  });

  it("keeps the output location and record counts as the result; partial completion says so", async () => {
    const adapter = adapterFor("bedrock", config());
    expect(await pollOnce(adapter, jobArn("mapcompleted"))).toMatchObject({
      observation: {
        result: {
          outputDataConfig: { s3OutputDataConfig: { s3Uri: "s3://evals/output/mapcompleted/" } },
          successRecordCount: 998,
        },
      },
    });
    const partial = await pollOnce(adapter, jobArn("mappartiallycompleted"));
    expect(partial).toMatchObject({ observation: { result: { partial: true, processedRecordCount: 800 } } });
    expect(await pollOnce(adapter, jobArn("mapfailed"))).toMatchObject({
      observation: { error: { status: "Failed", message: "Access denied to the S3 input location" } },
    });
  });

  it("a job it does not know is not-found; a job of another region is refused without a call", async () => {
    const adapter = adapterFor("bedrock", config());
    expect(await pollOnce(adapter, jobArn("nosuchjob"))).toEqual({ kind: "not-found" });
    const calls = fake.server.seen.length;
    expect(await pollOnce(adapter, jobArn("elsewhere", "eu-west-1"))).toMatchObject({
      kind: "failed",
      error: expect.stringMatching(/is in eu-west-1; this provider instance polls us-east-1/),
    });
    expect(fake.server.seen.length).toBe(calls);
  });
});

describe("signing: Signature Version 4 from the configured credentials", () => {
  it("a wrong secret is refused by the fake; the provider's health says so, once, without the secret", async () => {
    const health = createProviderHealth();
    const wrong = adapterFor("bedrock", config({ secretAccessKey: "not-the-secret-value" }), { health });
    fake.set(bedrockJob("signed", "InProgress"));
    const result = await pollOnce(wrong, jobArn("signed"));
    expect(result).toMatchObject({ kind: "failed", status: 403 });
    const failure = health.authFailures().get("bedrock");
    expect(failure?.message).toBe("bedrock: the status API refused the AWS credentials (403)");
    expect(JSON.stringify(result)).not.toContain("not-the-secret-value");
    // The right credentials clear it.
    const right = adapterFor("bedrock", config(), { health });
    expect(await pollOnce(right, jobArn("signed"))).toMatchObject({ kind: "observed" });
    expect(health.authFailures().size).toBe(0);
  });

  it("temporary credentials send their session token, under the signature", async () => {
    fake.sessionToken = "FwoGZXIvYXdzEFAKE";
    try {
      fake.set(bedrockJob("temporary", "InProgress"));
      expect(await pollOnce(adapterFor("bedrock", config()), jobArn("temporary"))).toMatchObject({
        kind: "failed",
        status: 403,
      });
      const withToken = adapterFor("bedrock", config({ sessionToken: fake.sessionToken }));
      expect(await pollOnce(withToken, jobArn("temporary"))).toMatchObject({ kind: "observed" });
    } finally {
      fake.sessionToken = undefined;
    }
  });

  it("a clock far from the provider's gives a signature the fake calls expired", async () => {
    const skewed = adapterFor("bedrock", config(), { now: () => Date.now() - 3_600_000 });
    fake.set(bedrockJob("skewed", "InProgress"));
    expect(await pollOnce(skewed, jobArn("skewed"))).toMatchObject({ kind: "failed", status: 403 });
  });
});

describe("Bedrock end to end, on SQLite", () => {
  it("a job nobody registered is found by discovery and settled by the reconciler's poll", async () => {
    const app = await providerApp({
      bedrock: { ...config(), discover: { enabled: true } },
    });
    try {
      const id = jobArn("found");
      fake.set(bedrockJob("found", "InProgress", { submitTime: new Date().toISOString() }));
      const providers = createNodeProviders(app.config.providers, Date.now, { health: app.health });
      const [options] = sweepOptionsFromConfig(app.config, providers);
      expect(options).toMatchObject({ provider: "bedrock", settleFromList: false });
      const swept = await sweepOnce(app.finality, options!);
      expect(swept).toMatchObject({ adopted: 1 });
      expect(await app.job("bedrock", id)).toMatchObject({ state: "pending", kind: "model_invocation_job" });
      fake.set(bedrockJob("found", "PartiallyCompleted", { submitTime: new Date().toISOString() }));
      await app.reconciler.runOnce();
      expect(await app.job("bedrock", id)).toMatchObject({
        state: "succeeded",
        settledBy: "reconcile",
        result: { partial: true, status: "PartiallyCompleted" },
      });
    } finally {
      await app.close();
    }
  });

  it("a listed job whose clientRequestToken is an open intent's key attaches that intent", async () => {
    const app = await providerApp({ bedrock: { ...config(), discover: { enabled: true } } });
    try {
      const created = await app.app.request("/v1/intents", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ provider: "bedrock", key: "order-4711", kind: "nightly-eval" }),
      });
      expect(created.status).toBe(201);
      fake.set(
        bedrockJob("tagged", "InProgress", {
          clientRequestToken: "order-4711",
          submitTime: new Date().toISOString(),
        }),
      );
      const providers = createNodeProviders(app.config.providers, Date.now, { health: app.health });
      const [options] = sweepOptionsFromConfig(app.config, providers);
      expect(await sweepOnce(app.finality, options!)).toMatchObject({ attached: 1 });
      const intent = await (await app.app.request("/v1/intents/order-4711")).json();
      expect(intent).toMatchObject({ status: "attached", jobId: jobArn("tagged") });
      expect(await app.job("bedrock", jobArn("tagged"))).toMatchObject({ kind: "nightly-eval" });
    } finally {
      await app.close();
    }
  });

  it("a registered job whose id is not a job ARN is refused at registration; webhooks are refused", async () => {
    const app = await providerApp({ bedrock: config() });
    try {
      await expect(app.register("bedrock", "job-123")).rejects.toThrow(/answered 400.*must be the job's ARN/);
      const response = await app.post("bedrock", {
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(response).toMatchObject({ status: 401, body: { reason: "no-matching-signature" } });
      expect(JSON.stringify(response.body)).toMatch(/takes no webhooks/);
    } finally {
      await app.close();
    }
  });
});

describe("Bedrock credentials in the service", () => {
  it("a refused signature is logged once as a configuration error, and no log line holds the secret", async () => {
    const secret = "wrong-secret-that-must-not-be-logged";
    const app = await providerApp({ bedrock: config({ secretAccessKey: secret }) });
    try {
      fake.set(bedrockJob("logged", "InProgress"));
      await app.register("bedrock", jobArn("logged"));
      await app.reconciler.runOnce();
      const errors = app.logs.filter((line) => line.level === "error");
      expect(errors).toEqual([
        {
          level: "error",
          fields: { provider: "bedrock", status: 403, configError: true },
          message:
            "bedrock: the status API refused the AWS credentials (403): check the credentials of providers.bedrock; polls of this provider fail until it is fixed",
        },
      ]);
      expect(JSON.stringify(app.logs)).not.toContain(secret);
      expect(JSON.stringify(await app.job("bedrock", jobArn("logged")))).not.toContain(secret);
    } finally {
      await app.close();
    }
  });

  it("serve does not warn that a Bedrock or Vertex instance has no webhook secret (it takes no webhooks)", () => {
    const warned: unknown[] = [];
    const parsed = parseConfig(
      {
        providers: {
          bedrock: config(),
          vertex: {
            type: "vertex",
            project: "p",
            location: "us-central1",
            serviceAccountKey: {
              client_email: "a@p.iam.gserviceaccount.com",
              private_key: "-----BEGIN PRIVATE KEY-----\nx\n",
            },
          },
          plain: { type: "generic" },
        },
      },
      {},
      { db: ":memory:" },
    );
    warnAboutUnsignedProviders(parsed, { warn: (fields: unknown) => void warned.push(fields) } as never);
    expect(warned).toEqual([{ provider: "plain" }]);
  });

  it("the configuration refuses a malformed region and keys other types take", () => {
    const region = providerSchema.safeParse(config({ region: "US East" }));
    expect(region.error?.issues[0]).toMatchObject({
      path: ["region"],
      message: "must be an AWS region, e.g. us-east-1",
    });
    expect(providerSchema.safeParse(config({ apiKey: "x" })).success).toBe(false);
    expect(providerSchema.safeParse(config({ webhook: { secrets: ["x"] } })).success).toBe(false);
  });
});

describe("Bedrock configuration reaches its users", () => {
  it("timeoutSeconds is the poll timeout; without baseUrl, requests go to the region's endpoint", async () => {
    expect(adapterFor("bedrock", config({ timeoutSeconds: 17 })).pollTimeoutMs).toBe(17_000);
    const { baseUrl: _fake, ...noBase } = config({ region: "eu-central-1" });
    const result = await pollOnce(adapterFor("bedrock", noBase), jobArn("abc", "eu-central-1"));
    // loopbackOnly refuses anything but 127.0.0.1, and says where the request was going.
    expect(result).toMatchObject({
      kind: "failed",
      error: expect.stringContaining("https://bedrock.eu-central-1.amazonaws.com/model-invocation-job/"),
    });
  });
});
