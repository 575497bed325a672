import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, type Service, startService, tempDir } from "../http/helpers/service.js";
import { getJson, SECRET, sendWebhook } from "../http/helpers/webhooks.js";

// `finality send` signs with each scheme the providers use, and the real service accepts it:
// the check is the service's own verifier, in another process.

const dir = tempDir();
let service: Service;
let config: string;

beforeAll(async () => {
  config = dir.file("send.json");
  writeFileSync(
    config,
    JSON.stringify({
      providers: {
        std: { type: "generic", webhook: { secrets: [SECRET] } },
        github: {
          type: "generic",
          webhook: {
            scheme: "hmac-sha256",
            secrets: ["a raw hmac secret"],
            header: "X-Hub-Signature-256",
            prefix: "sha256=",
            idHeader: "X-GitHub-Delivery",
          },
        },
        shopify: {
          type: "generic",
          webhook: {
            scheme: "hmac-sha256",
            secrets: ["shop-secret"],
            header: "X-Shopify-Hmac-Sha256",
            encoding: "base64",
          },
        },
        stripe: { type: "generic", webhook: { scheme: "stripe", secrets: ["whsec_stripe_style_raw_text"] } },
        predictions: { type: "replicate", webhook: { secrets: [SECRET] } },
        ai: {
          type: "openai",
          apiKey: "sk-test",
          baseUrl: "http://127.0.0.1:1/v1",
          webhook: { secrets: [SECRET] },
        },
        unsigned: { type: "generic" },
      },
    }),
  );
  service = await startService({ db: dir.file("send.db"), args: ["--config", config] });
});

afterAll(async () => {
  await service?.stop();
  dir.cleanup();
});

/** A port nothing listens on: bound by the kernel, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const send = (args: string[]) => runCli(["send", ...args, "--config", config, "--url", service.url]);

describe("finality send", () => {
  it.each([["std"], ["github"], ["shopify"], ["stripe"], ["predictions"]])(
    "signs for provider %s as its sender would, and the service applies it",
    async (provider) => {
      const sent = await send([
        provider,
        `job-${provider}`,
        "succeeded",
        "--result",
        '{"ok":true}',
        "--json",
      ]);
      expect(sent.code, sent.stderr + sent.stdout).toBe(0);
      expect(JSON.parse(sent.stdout)).toMatchObject({
        url: `${service.url}/webhooks/${provider}`,
        status: 200,
        answer: { outcome: "applied" },
      });
      const job = await getJson(`${service.url}/v1/jobs/${provider}/job-${provider}`);
      expect(job.body).toMatchObject({ state: "succeeded", settledBy: "webhook" });
      // A Replicate webhook carries the whole prediction: the result is in its `output`.
      const result = job.body.result as Record<string, unknown>;
      expect(provider === "predictions" ? result.output : result).toEqual({ ok: true });
    },
  );

  it("text output names the URL and the answer", async () => {
    const sent = await send(["std", "job-text", "running"]);
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/^POST http:\/\/127\.0\.0\.1:\d+\/webhooks\/std → 200 \{"outcome":"applied"/);
  });

  it.each([
    [["ai", "resp_1", "succeeded"], "whose webhooks only name the job"],
    [["unsigned", "x", "succeeded"], 'provider "unsigned" has no webhook secret'],
    [["nobody", "x", "succeeded"], 'unknown provider "nobody"'],
  ])("%j is refused with the reason", async (args, message) => {
    const sent = await send(args);
    expect(sent.code).not.toBe(0);
    expect(sent.stderr).toContain(message);
  });

  it("an unknown state is a usage error", async () => {
    const sent = await send(["std", "x", "finished"]);
    expect(sent.code).toBe(2);
    expect(sent.stderr).toContain("Allowed choices are pending, running");
  });

  it("a service that is not there is named, with the error code", async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const sent = await runCli(["send", "std", "x", "running", "--config", config, "--url", url]);
    expect(sent.code).toBe(1);
    const port = new URL(url).port;
    expect(sent.stderr).toContain(`cannot reach ${url}/webhooks/std: connect ECONNREFUSED 127.0.0.1:${port}`);
  });

  it("with no configuration file and no secret, the advice is FINALITY_WEBHOOK_SECRET", async () => {
    const sent = await runCli(["send", "generic", "x", "running", "--url", service.url]);
    expect(sent.code).toBe(2);
    expect(sent.stderr).toContain('provider "generic" has no webhook secret: set FINALITY_WEBHOOK_SECRET');
    expect(sent.stderr).not.toContain("providers.generic.webhook.secrets");
  });
});

describe("a webhook timestamp in milliseconds", () => {
  it("is refused with a hint that seconds are expected", async () => {
    const answer = await sendWebhook(
      service.url,
      "std",
      { jobId: "ms", state: "running" },
      { timestampSeconds: Date.now() },
    );
    expect(answer.status).toBe(401);
    expect(answer.body.detail).toContain("looks like milliseconds; seconds since the epoch are expected");
    const seconds = await sendWebhook(service.url, "std", { jobId: "ms", state: "running" });
    expect(seconds.status).toBe(200);
  });
});
