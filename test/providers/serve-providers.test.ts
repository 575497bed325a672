import { writeFileSync } from "node:fs";
import { sign as githubSign } from "@octokit/webhooks-methods";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OpenAIFake } from "../fakes/openai-fake.js";
import { openaiResponse } from "../fakes/openai-fixtures.js";
import { deliver } from "../fakes/webhook-delivery.js";
import { type Service, startService, tempDir } from "../http/helpers/service.js";

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const GITHUB_SECRET = "It's a Secret to Everybody";
const dir = tempDir();
const fake = new OpenAIFake();
let service: Service;

beforeAll(async () => {
  await fake.listen();
  const config = dir.file("providers.json");
  writeFileSync(
    config,
    JSON.stringify({
      providers: {
        openai: {
          type: "openai",
          baseUrl: `${fake.server.url}/v1`,
          apiKey: "env:TEST_OPENAI_KEY",
          webhook: { secrets: [SECRET] },
        },
        github: {
          type: "generic",
          webhook: {
            scheme: "hmac-sha256",
            secrets: [GITHUB_SECRET],
            header: "X-Hub-Signature-256",
            prefix: "sha256=",
          },
        },
      },
    }),
  );
  service = await startService({
    db: dir.file("providers.db"),
    args: ["--config", config],
    env: { TEST_OPENAI_KEY: fake.apiKey },
  });
});
afterAll(async () => {
  await service?.stop();
  await fake.close();
  dir.cleanup();
});

/** The real `finality serve`: webhooks take the Node fast path, not the Hono route. */
describe("provider webhooks through finality serve", () => {
  it("a thin OpenAI webhook makes the service fetch the response with the key from the environment", async () => {
    fake.set(openaiResponse("resp_served", "completed"));
    const sent = await deliver(
      `${service.url}/webhooks/openai`,
      fake.webhook(SECRET, "response.completed", "resp_served"),
    );
    expect(sent).toMatchObject({ status: 200, body: { outcome: "applied", state: "succeeded" } });
    const fetched = fake.server.requestsTo("/v1/responses/resp_served");
    expect(fetched).toHaveLength(1);
    expect(fetched[0]?.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
  });

  it("a GitHub-style signature in its own header is read on the fast path", async () => {
    const body = JSON.stringify({ jobId: "gh-1", state: "running" });
    const headers = {
      "content-type": "application/json",
      "x-hub-signature-256": await githubSign(GITHUB_SECRET, body),
    };
    expect(await deliver(`${service.url}/webhooks/github`, { body, headers })).toMatchObject({ status: 200 });
    headers["x-hub-signature-256"] = "sha256=00";
    expect(await deliver(`${service.url}/webhooks/github`, { body, headers })).toMatchObject({ status: 401 });
  });
});
