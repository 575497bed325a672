import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app.js";
import { parseConfig } from "../../src/config/load-config.js";
import { setupOf } from "../../src/dashboard/first-steps.js";
import { createProviderActivity } from "../../src/dashboard/provider-activity.js";
import type { Finality } from "../../src/engine/finality.js";
import { finalityFromConfig } from "../../src/host/node/finality-from-config.js";
import { noopMetrics } from "../../src/http/service-metrics.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { engineOf } from "../helpers/engine.js";

// The dashboard with Amazon Bedrock and Vertex AI instances: providers that take no webhooks.

const TOKEN = "poll-only-page-token-0123456789";
const AWS_SECRET = "aws-secret-access-key-do-not-show";
const PEM = "-----BEGIN PRIVATE KEY-----\nMIIvertex-private-key-do-not-show\n-----END PRIVATE KEY-----\n";
const PROVIDERS = {
  bedrock: { type: "bedrock", region: "us-east-1", accessKeyId: "AKIAEXAMPLE", secretAccessKey: AWS_SECRET },
  vertex: {
    type: "vertex",
    project: "p",
    location: "us-central1",
    serviceAccountKey: { client_email: "a@p.iam.gserviceaccount.com", private_key: PEM },
  },
  plain: { type: "generic" },
};

let finality: Finality | null = null;
afterEach(async () => {
  await finality?.close();
  finality = null;
});

async function configPage(): Promise<string> {
  const config = parseConfig({ server: { apiToken: TOKEN }, providers: PROVIDERS }, {}, { db: ":memory:" });
  finality = await finalityFromConfig(config);
  const clock = engineOf(finality).clock;
  const app = createApp({
    finality,
    config,
    metrics: noopMetrics,
    activity: createProviderActivity(Object.keys(config.providers), () => clock.now()),
    receivers: createWebhookReceivers(config.providers, () => clock.now()),
  });
  const response = await app.request("/config", { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(response.status).toBe(200);
  return response.text();
}

describe("Bedrock and Vertex AI instances on the dashboard", () => {
  it("show their credentials as set, never what they are, and offer no test webhook", async () => {
    const html = await configPage();
    for (const name of ["bedrock", "vertex"]) {
      const start = html.indexOf(`data-provider="${name}"`);
      expect(start, name).toBeGreaterThan(-1);
      const row = html.slice(start, html.indexOf("</tr>", start));
      expect(row).toContain('data-poll="set"');
      expect(row).toContain("credentials set; no webhooks");
      const at = html.indexOf(`data-test-webhook="${name}"`);
      const section = html.slice(at, html.indexOf("</p>", at));
      expect(section).toContain(`is of type ${name}, which sends no webhooks`);
      expect(section).not.toContain("until a secret is set");
    }
    expect(html).not.toContain(AWS_SECRET);
    expect(html).not.toContain("vertex-private-key-do-not-show");
  });

  it("are not in the overview's list of instances whose webhooks are refused", () => {
    const config = parseConfig({ providers: PROVIDERS }, {}, { db: ":memory:" });
    expect(setupOf(config, "generic").unsigned).toEqual(["plain"]);
  });
});
