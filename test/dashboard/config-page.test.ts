import { afterEach, describe, expect, it } from "vitest";
import { createApp } from "../../src/app/create-app.js";
import { parseConfig } from "../../src/config/load-config.js";
import { redactedOrigin } from "../../src/dashboard/config-page.js";
import { createProviderActivity } from "../../src/dashboard/provider-activity.js";
import type { Finality } from "../../src/engine/finality.js";
import { finalityFromConfig } from "../../src/host/node/finality-from-config.js";
import { noopMetrics } from "../../src/http/service-metrics.js";
import { createWebhookReceivers } from "../../src/providers/node-providers.js";
import { engineOf } from "../helpers/engine.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";

// Issue 19, item 8: the configuration page and the overview's empty states, through app.request().

const TOKEN = "config-page-token-0123456789";
/** Every value the page must never show. */
const SECRETS = {
  openaiKey: "sk-live-openai-key-do-not-show-42",
  openaiWebhook: "whsec_T3BlbkFJd2ViaG9va1NlY3JldERvTm90U2hvdw==",
  pollToken: "poll-bearer-token-do-not-show",
  pollPathToken: "path-token-do-not-show",
  effectSecret: "effect-signing-secret-do-not-show",
  effectPassword: "effect-password-do-not-show",
  effectQuery: "effect-query-key-do-not-show",
};

const CONFIG = {
  server: { apiToken: TOKEN },
  providers: {
    acme: {
      type: "generic",
      webhook: { secrets: [SECRET] },
      poll: {
        url: `http://127.0.0.1:9/status/${SECRETS.pollPathToken}/{id}`,
        headers: { authorization: `Bearer ${SECRETS.pollToken}` },
      },
      reconcile: { graceSeconds: 7, concurrency: 3 },
    },
    beta: { type: "generic" },
    openai: { type: "openai", apiKey: SECRETS.openaiKey, webhook: { secrets: [SECRETS.openaiWebhook] } },
  },
  reconcile: { graceSeconds: 90, minIntervalSeconds: 30, maxIntervalSeconds: 900 },
  effects: [
    {
      name: "notify",
      url: `https://ops:${SECRETS.effectPassword}@hooks.example.com:8443/deliver/x?key=${SECRETS.effectQuery}`,
      secret: SECRETS.effectSecret,
      on: ["succeeded"],
      providers: ["acme"],
    },
  ],
};

let finality: Finality | null = null;
afterEach(async () => {
  await finality?.close();
  finality = null;
});

async function app(raw: Record<string, unknown>, env: Record<string, string> = {}) {
  const config = parseConfig(raw, env, { db: ":memory:" });
  finality = await finalityFromConfig(config);
  const clock = engineOf(finality).clock;
  const activity = createProviderActivity(Object.keys(config.providers), () => clock.now());
  const metrics = activity.observe(noopMetrics);
  const built = createApp({
    finality,
    config,
    metrics,
    activity,
    receivers: createWebhookReceivers(config.providers, () => clock.now()),
  });
  const get = async (path: string) => {
    const response = await built.request(path, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    return response.text();
  };
  return { app: built, get, metrics };
}

const rowOf = (html: string, attribute: string) => {
  const start = html.indexOf(attribute);
  expect(start, attribute).toBeGreaterThan(-1);
  return html.slice(start, html.indexOf("</tr>", start));
};

describe("the configuration page", () => {
  it("shows each provider's type, whether it has a secret and a poll URL, and its reconcile settings", async () => {
    const { get } = await app(CONFIG);
    const html = await get("/config");
    const acme = rowOf(html, 'data-provider="acme"');
    expect(acme).toContain("generic");
    expect(acme).toContain('data-secret="set"');
    expect(acme).toContain('data-poll="set"');
    // The instance's overrides over the global values.
    expect(acme).toContain("first poll after 7 s, then 30–900 s");
    expect(acme).toContain("3 at once");
    const beta = rowOf(html, 'data-provider="beta"');
    expect(beta).toContain('data-secret="none"');
    expect(beta).toContain("webhooks refused (401)");
    expect(beta).toContain('data-poll="none"');
    expect(beta).toContain("first poll after 90 s");
    const openai = rowOf(html, 'data-provider="openai"');
    expect(openai).toContain(">openai<");
    expect(openai).toContain("API key set");
  });

  it("shows each provider's unknown-jobs policy, the effect retries and the run attempts", async () => {
    const { get } = await app({
      ...CONFIG,
      providers: { ...CONFIG.providers, beta: { type: "generic", unknownJobs: "registered-only" } },
      effectDelivery: { retrySeconds: [10, 600], maxAgeSeconds: 86_400, maxAttempts: 7 },
      workers: { maxAttempts: 4, retryBaseSeconds: 2, retryMaxSeconds: 60 },
    });
    const html = await get("/config");
    expect(rowOf(html, 'data-provider="acme"')).toContain('data-unknown-jobs="adopt"');
    expect(rowOf(html, 'data-provider="beta"')).toContain('data-unknown-jobs="registered-only"');
    expect(rowOf(html, 'data-provider="beta"')).toContain("parked until it is registered");
    expect(html).toContain(
      '<dd data-field="effect-retries">retry after 10 s, 10 min (the last repeats); dead after 24 h 0 min old or 7 attempts</dd>',
    );
    expect(html).toContain(
      '<dd data-field="run-attempts">4 per run, queued again after 2 s doubling up to 60 s</dd>',
    );
  });

  it("lists the effects with their destination as scheme://host:port", async () => {
    const { get } = await app(CONFIG);
    const row = rowOf(await get("/config"), 'data-effect="notify"');
    expect(row).toContain("https://hooks.example.com:8443");
    expect(row).toContain("succeeded");
    expect(row).toContain("providers acme");
    expect(redactedOrigin("http://127.0.0.1/a?b=c")).toBe("http://127.0.0.1:80");
    expect(redactedOrigin("https://u:p@x.test/")).toBe("https://x.test:443");
  });

  it("never shows a secret, a key, a token or a URL's path, query or password", async () => {
    const { get } = await app(CONFIG);
    const html = await get("/config");
    for (const [what, value] of Object.entries({ ...SECRETS, webhookSecret: SECRET, apiToken: TOKEN })) {
      expect(html.includes(value), what).toBe(false);
    }
    expect(html).not.toContain("/deliver/x");
    expect(html).not.toContain("/status/");
  });

  it("shows each provider's last webhook and poll with their outcome", async () => {
    const { app: built, get, metrics } = await app(CONFIG);
    const before = await get("/config");
    expect(rowOf(before, 'data-provider="acme"')).toContain("none since start");
    // A webhook with a bad signature reaches the ledger never, and the page all the same.
    const body = JSON.stringify({ jobId: "j1", state: "running" });
    const bad = await built.request("/webhooks/acme", {
      method: "POST",
      headers: { ...signWith(SECRET, body), "webhook-signature": "v1,AAAA" },
      body,
    });
    expect(bad.status).toBe(401);
    const good = await built.request("/webhooks/beta", {
      method: "POST",
      headers: signWith(SECRET, body),
      body,
    });
    expect(good.status).toBe(401);
    metrics.pollFinished("acme", "failed");
    const html = await get("/config");
    const acme = rowOf(html, 'data-provider="acme"');
    expect(acme).toMatch(/data-field="last-webhook"><span data-outcome="signature-invalid">/);
    expect(acme).toMatch(/data-field="last-poll"><span data-outcome="failed">/);
    expect(rowOf(html, 'data-provider="beta"')).toMatch(
      /data-field="last-webhook"><span data-outcome="[a-z-]+">/,
    );
    expect(rowOf(html, 'data-provider="openai"')).toContain("none since start");
  });

  it("shows a parked or tombstoned webhook as taken, not as a problem", async () => {
    const { get, metrics } = await app(CONFIG);
    metrics.webhookReceived("acme", "parked");
    metrics.webhookReceived("beta", "already-settled-pruned");
    metrics.webhookReceived("openai", "signature-invalid");
    const html = await get("/config");
    expect(rowOf(html, 'data-provider="acme"')).toContain('<span class="badge applied">parked</span>');
    expect(rowOf(html, 'data-provider="beta"')).toContain(
      '<span class="badge applied">already-settled-pruned</span>',
    );
    expect(rowOf(html, 'data-provider="openai"')).toContain(
      '<span class="badge failed">signature-invalid</span>',
    );
  });

  it("records only configured provider names (a webhook to any name cannot grow it)", () => {
    const activity = createProviderActivity(["acme"], () => 1);
    const metrics = activity.observe(noopMetrics);
    metrics.webhookReceived("(unknown)", "unknown-provider");
    metrics.webhookReceived("acme", "applied");
    expect(activity.lastWebhook("(unknown)")).toBeUndefined();
    expect(activity.lastWebhook("acme")).toEqual({ at: 1, outcome: "applied" });
  });
});

describe("the overview's empty states", () => {
  it("an empty ledger says how to start: register a job, send a test webhook, run the demo", async () => {
    const { get } = await app(CONFIG);
    const html = await get("/");
    expect(html).toContain('id="first-steps"');
    expect(html).toContain("npx finality jobs register acme my-first-job");
    expect(html).toContain("npx finality send acme my-first-job succeeded");
    expect(html).toContain("npm run demo");
  });

  it("the curl line names the address the browser used, not HOST:PORT, and wraps on a phone", async () => {
    const { app: built } = await app(CONFIG);
    const response = await built.request("http://127.0.0.1:4321/", {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const html = await response.text();
    expect(html).toContain("curl -s -X POST http://127.0.0.1:4321/v1/jobs");
    expect(html).not.toContain("HOST:PORT");
    expect(html).toContain("#first-steps pre { white-space: pre-wrap;");
  });

  it("every page links to the API reference, which answers", async () => {
    const { app: built, get } = await app(CONFIG);
    for (const path of ["/", "/jobs", "/config"]) {
      expect(await get(path)).toContain('<a href="/docs/api" id="api-reference">API reference</a>');
    }
    expect((await built.request("/docs/api")).status).toBe(200);
  });

  it("a ledger with a job shows no first steps", async () => {
    const { app: built, get } = await app(CONFIG);
    const registered = await built.request("/v1/jobs", {
      method: "POST",
      headers: { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" },
      body: JSON.stringify({ provider: "acme", id: "j1" }),
    });
    expect(registered.status).toBe(201);
    expect(await get("/")).not.toContain('id="first-steps"');
  });

  it("says which providers refuse webhooks because no secret is set", async () => {
    const { get } = await app(CONFIG);
    const html = await get("/");
    expect(html).toMatch(/id="unsigned-providers">Webhooks to \/webhooks\/beta are refused \(401\)/);
    expect(html).toContain("webhook.secrets");
  });

  it("for the built-in provider, names FINALITY_WEBHOOK_SECRET; with it set, no warning", async () => {
    const bare = await app({ server: { apiToken: TOKEN } });
    const html = await bare.get("/");
    expect(html).toContain("/webhooks/generic are refused (401)");
    expect(html).toContain("FINALITY_WEBHOOK_SECRET");
    await finality?.close();
    const signed = await app({ server: { apiToken: TOKEN } }, { FINALITY_WEBHOOK_SECRET: SECRET });
    const quiet = await signed.get("/");
    expect(quiet).not.toContain('id="unsigned-providers"');
    expect(quiet).toContain("npx finality send generic my-first-job succeeded");
  });
});
