import { writeFileSync } from "node:fs";
import { request } from "node:http";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Service, startService, tempDir } from "../http/helpers/service.js";
import { getJson } from "../http/helpers/webhooks.js";

// Issue 19: the configuration page's "send test webhook" form, against a real `finality serve`
// on its own SQLite file, over loopback HTTP.

const TOKEN = "test-webhook-form-token-0123456789";
const AUTH = { authorization: `Bearer ${TOKEN}` };
/** Every value no page may show. */
const SECRETS = {
  acme: "whsec_dGVzdC13ZWJob29rLWZvcm0tYWNtZS1zZWNyZXQ=",
  predictions: "whsec_dGVzdC13ZWJob29rLWZvcm0tcmVwbGljYXRl",
  stripe: "stripe-style-raw-secret-do-not-show",
  openai: "whsec_dGVzdC13ZWJob29rLWZvcm0tb3BlbmFpLXNlY3I=",
  openaiKey: "sk-test-webhook-form-key-do-not-show",
  token: TOKEN,
};
const PROVIDERS = {
  acme: { type: "generic", webhook: { secrets: [SECRETS.acme] } },
  stripe: { type: "generic", webhook: { scheme: "stripe", secrets: [SECRETS.stripe] } },
  predictions: { type: "replicate", webhook: { secrets: [SECRETS.predictions] } },
  ai: {
    type: "openai",
    apiKey: SECRETS.openaiKey,
    baseUrl: "http://127.0.0.1:1/v1",
    webhook: { secrets: [SECRETS.openai] },
  },
  unsigned: { type: "generic" },
};

const dir = tempDir();
/** With an API token: the token and the Origin / Sec-Fetch-Site checks. */
let service: Service;
let dbPath: string;
/** Without one (loopback only): the Host check too. */
let open: Service;
let openDbPath: string;

async function serve(name: string, server: Record<string, unknown>): Promise<[Service, string]> {
  const config = dir.file(`${name}.config.json`);
  writeFileSync(config, JSON.stringify({ server, providers: PROVIDERS, reconcile: { graceSeconds: 3600 } }));
  const db = dir.file(`${name}.db`);
  return [await startService({ db, args: ["--config", config] }), db];
}

beforeAll(async () => {
  // A small body limit, under the form's own (16 KiB): the webhook route refuses a big result.
  [service, dbPath] = await serve("token", { apiToken: TOKEN, bodyLimitBytes: 4096 });
  [open, openDbPath] = await serve("open", {});
});

afterAll(async () => {
  await service?.stop();
  await open?.stop();
  dir.cleanup();
});

interface Answer {
  status: number;
  location: string | undefined;
  body: string;
}

/** A form POST over node:http: fetch may not set Host, and the redirect is what is checked. */
function post(base: string, path: string, form: Record<string, string>, headers: Record<string, string>) {
  const body = new URLSearchParams(form).toString();
  return new Promise<Answer>((resolve, reject) => {
    const sent = request(
      new URL(path, base),
      {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "content-length": String(Buffer.byteLength(body)),
          ...headers,
        },
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, location: response.headers.location, body: text }),
        );
      },
    );
    sent.on("error", reject);
    sent.end(body);
  });
}

const send = (form: Record<string, string>, headers: Record<string, string> = AUTH) =>
  post(service.url, "/config/test-webhook", form, headers);

async function page(path: string, base = service.url): Promise<string> {
  const response = await fetch(`${base}${path}`, { headers: AUTH });
  expect(response.status, path).toBe(200);
  return response.text();
}

/** Every row of every table of the service's SQLite file (WAL: read while it runs). */
function ledgerOf(file: string): string {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[];
    return JSON.stringify(tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}"`).all()]));
  } finally {
    db.close();
  }
}

const sectionOf = (html: string, provider: string) => {
  const start = html.indexOf(`data-test-webhook="${provider}"`);
  expect(start, provider).toBeGreaterThan(-1);
  const next = html.indexOf("data-test-webhook=", start + 1);
  return html.slice(start, next === -1 ? undefined : next);
};

describe("the configuration page's test webhook form", () => {
  it("is shown only for providers that can sign one; the others say why", async () => {
    const html = await page("/config");
    for (const name of ["acme", "stripe", "predictions"]) {
      const section = sectionOf(html, name);
      expect(section, name).toContain('data-form="test-webhook"');
      expect(section).toContain(`name="provider" value="${name}"`);
    }
    // Replicate reports no "lost"; generic every canonical state.
    expect(sectionOf(html, "predictions")).not.toContain('value="lost"');
    expect(sectionOf(html, "acme")).toContain('value="lost"');
    const unsigned = sectionOf(html, "unsigned");
    expect(unsigned).not.toContain("<form");
    expect(unsigned).toContain("webhooks are refused (401) until a secret is set");
    expect(unsigned).toContain("providers.unsigned.webhook.secrets");
    const ai = sectionOf(html, "ai");
    expect(ai).not.toContain("<form");
    expect(ai).toContain("whose webhooks only name the job");
  });

  it("a POST signs, delivers through the webhook route and settles the job (seen through the API)", async () => {
    const sent = await send({
      provider: "acme",
      jobId: "form-job-1",
      state: "succeeded",
      result: '{"url": "s3://out/1"}',
    });
    expect(sent.status).toBe(303);
    expect(sent.location).toBe("/config?test-webhook=acme&outcome=applied&job=form-job-1#test-webhook-acme");
    const job = await getJson(`${service.url}/v1/jobs/acme/form-job-1`, AUTH);
    expect(job.status).toBe(200);
    expect(job.body).toMatchObject({ state: "succeeded", result: { url: "s3://out/1" } });
    // The redirect's page says what happened, at the form, with a link to the job.
    const shown = sectionOf(await page(sent.location ?? ""), "acme");
    expect(shown).toMatch(/data-notice="applied"/);
    expect(shown).toContain('href="/jobs/acme/form-job-1"');
    expect(shown).toContain("200");
    // It went through the webhook route: the provider's last webhook is this one.
    const row = (await page("/config")).split('data-provider="acme"')[1] ?? "";
    expect(row.slice(0, row.indexOf("</tr>"))).toContain('data-outcome="applied"');
  });

  it("signs with each scheme the configuration names (stripe-style, replicate)", async () => {
    const stripe = await send({ provider: "stripe", jobId: "form-stripe", state: "running", result: "" });
    expect(stripe.location).toContain("outcome=applied");
    const replicate = await send({
      provider: "predictions",
      jobId: "form-pred",
      state: "failed",
      result: "",
    });
    expect(replicate.location).toContain("outcome=applied");
    expect((await getJson(`${service.url}/v1/jobs/stripe/form-stripe`, AUTH)).body).toMatchObject({
      state: "running",
    });
    expect((await getJson(`${service.url}/v1/jobs/predictions/form-pred`, AUTH)).body).toMatchObject({
      state: "failed",
    });
  });

  it("a second webhook for a settled job shows the ledger's outcome, not an error", async () => {
    await send({ provider: "acme", jobId: "form-job-2", state: "succeeded", result: "" });
    const again = await send({ provider: "acme", jobId: "form-job-2", state: "failed", result: "" });
    expect(again.status).toBe(303);
    expect(again.location).toContain("outcome=conflicting-terminal");
    expect(sectionOf(await page(again.location ?? ""), "acme")).toContain(
      'data-notice="conflicting-terminal"',
    );
  });

  it("a webhook the route refuses shows its status and problem, and changes nothing", async () => {
    const before = ledgerOf(dbPath);
    const result = JSON.stringify({ blob: "x".repeat(6000) });
    const answer = await send({ provider: "acme", jobId: "too-big", state: "succeeded", result });
    expect(answer.status).toBe(200);
    const section = sectionOf(answer.body, "acme");
    expect(section).toContain('data-notice="payload-too-large"');
    expect(section).toMatch(/: 413 <strong>payload-too-large<\/strong>/);
    expect(ledgerOf(dbPath)).toBe(before);
  });

  it("refuses bad input with a clear message, keeps what was typed, and changes nothing", async () => {
    const before = ledgerOf(dbPath);
    const cases: [Record<string, string>, string][] = [
      [
        { provider: "acme", jobId: "bad-1", state: "succeeded", result: "{not json" },
        "The result is not JSON",
      ],
      [{ provider: "acme", jobId: "bad-2", state: "done", result: "" }, 'Unknown state "done"'],
      [{ provider: "predictions", jobId: "bad-3", state: "lost", result: "" }, 'Unknown state "lost"'],
      [{ provider: "acme", jobId: "   ", state: "succeeded", result: "" }, "Enter the job id"],
      [{ provider: "acme", state: "succeeded" }, "Enter the job id"],
      [{ provider: "nobody", jobId: "bad-4", state: "succeeded" }, 'No provider instance named "nobody"'],
      [{ provider: "unsigned", jobId: "bad-5", state: "succeeded" }, "has no webhook secret"],
      [{ provider: "ai", jobId: "bad-6", state: "succeeded" }, "whose webhooks only name the job"],
    ];
    for (const [form, message] of cases) {
      const answer = await send(form);
      expect(answer.status, JSON.stringify(form)).toBe(400);
      expect(answer.body).toContain('data-notice="refused"');
      expect(answer.body).toContain(message.replaceAll('"', "&quot;"));
    }
    // What was typed comes back in the form (escaped), so it can be corrected.
    const typed = await send({ provider: "acme", jobId: "bad-1", state: "running", result: "{not json" });
    const section = sectionOf(typed.body, "acme");
    expect(section).toContain('value="bad-1"');
    expect(section).toContain('value="{not json"');
    expect(section).toMatch(/value="running" selected/);
    expect(ledgerOf(dbPath)).toBe(before);
  });

  it("refuses a cross-site POST (foreign Origin, Sec-Fetch-Site, no token) and changes nothing", async () => {
    const form = { provider: "acme", jobId: "cross-site-1", state: "succeeded" };
    const before = ledgerOf(dbPath);
    const hostile: [Record<string, string>, number][] = [
      [{ ...AUTH, origin: "https://evil.example" }, 403],
      [{ ...AUTH, "sec-fetch-site": "cross-site" }, 403],
      [{ ...AUTH, "sec-fetch-site": "same-site" }, 403],
      [{ ...AUTH, origin: "null" }, 403],
      // No token and no session cookie.
      [{}, 401],
      [{ authorization: "Bearer not-the-token-at-all" }, 401],
    ];
    for (const [headers, status] of hostile) {
      const answer = await send(form, headers);
      expect(answer.status, JSON.stringify(headers)).toBe(status);
      expect(answer.location).toBeUndefined();
    }
    expect(ledgerOf(dbPath)).toBe(before);
    expect((await getJson(`${service.url}/v1/jobs/acme/cross-site-1`, AUTH)).status).toBe(404);
  });

  it("without a token, refuses a rebound host name too (and takes a loopback one)", async () => {
    const form = { provider: "acme", jobId: "rebound-1", state: "succeeded" };
    const before = ledgerOf(openDbPath);
    const port = new URL(open.url).port;
    const hostile: Record<string, string>[] = [
      { host: `evil.example:${port}` },
      { host: `127.0.0.1:${port}`, "x-forwarded-host": "evil.example" },
      { origin: "https://evil.example" },
      { "sec-fetch-site": "cross-site" },
    ];
    for (const headers of hostile) {
      const answer = await post(open.url, "/config/test-webhook", form, headers);
      expect(answer.status, JSON.stringify(headers)).toBe(403);
    }
    expect(ledgerOf(openDbPath)).toBe(before);
    const same = await post(open.url, "/config/test-webhook", form, {
      origin: open.url,
      "sec-fetch-site": "same-origin",
    });
    expect(same.status).toBe(303);
    expect((await getJson(`${open.url}/v1/jobs/acme/rebound-1`)).body).toMatchObject({ state: "succeeded" });
  });

  it("never shows a secret: not on any page, not in a refusal, not in a redirect", async () => {
    await send({ provider: "acme", jobId: "secret-check", state: "succeeded", result: "" });
    const shown = [
      await page("/config"),
      await page("/config?test-webhook=acme&outcome=applied&job=secret-check"),
      await page("/"),
      await page("/jobs"),
      await page("/jobs/acme/secret-check"),
      await page("/effects"),
      await page("/parked"),
      (await send({ provider: "acme", jobId: "", state: "succeeded" })).body,
      (await send({ provider: "stripe", jobId: "x", state: "done" })).body,
      (await send({ provider: "ai", jobId: "x", state: "succeeded" })).body,
      JSON.stringify(await send({ provider: "predictions", jobId: "secret-check-2", state: "running" })),
      await page("/config", open.url),
    ];
    for (const html of shown)
      for (const [what, value] of Object.entries(SECRETS)) expect(html.includes(value), what).toBe(false);
  });

  it("a redirect's query shows a notice only for a configured provider and a known outcome", async () => {
    const forged = [
      "/config?test-webhook=acme&outcome=you-have-been-hacked&job=x",
      "/config?test-webhook=nobody&outcome=applied&job=x",
      "/config?test-webhook=acme&outcome=applied",
    ];
    for (const path of forged) expect(await page(path)).not.toContain("data-notice=");
  });
});
