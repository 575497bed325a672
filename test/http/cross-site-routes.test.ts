import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { isUnguardedPath } from "../../src/http/cross-site-guard.js";
import { fuzzApp, ledgerSnapshot } from "../fuzz/fuzz-app.js";
import { engineOf } from "../helpers/engine.js";
import { tempDir } from "../helpers/temp-dir.js";
import { serveWith } from "../service/service-helpers.js";
import { SECRET, signWith } from "./helpers/webhooks.js";

// The cross-site guard on every route the app has, read from the router itself (app.routes),
// so a route added later is covered without anyone remembering to list it here.

type App = Awaited<ReturnType<typeof fuzzApp>>;
let t: App | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const TOKEN = "a-token-of-sixteen-chars";
const BASE = "http://127.0.0.1:8787";

/** A concrete path for a route pattern: `/jobs/:provider/:rest{.+}` → `/jobs/acme/job-1`. */
function concrete(pattern: string): string {
  return pattern
    .replace(/:rest\{[^}]*\}/g, "job-1")
    .replace(/:provider/g, "acme")
    .replace(/:workerId/g, "w1")
    .replace(/:id/g, "x")
    .replace(/\*/g, "x");
}

/** Every (method, path) the router knows, middleware left out; `ALL` stands for a few methods. */
function routesOf(app: App["app"]): { method: string; path: string; pattern: string }[] {
  const seen = new Set<string>();
  const routes: { method: string; path: string; pattern: string }[] = [];
  for (const route of app.routes) {
    if (route.path === "/*") continue; // app.use(...) without a path: the middleware
    const methods = route.method === "ALL" ? ["GET", "POST", "DELETE"] : [route.method];
    for (const method of methods) {
      const key = `${method} ${route.path}`;
      if (seen.has(key)) continue;
      seen.add(key);
      routes.push({ method, path: concrete(route.path), pattern: route.path });
    }
  }
  return routes;
}

function init(method: string, headers: Record<string, string>): RequestInit {
  const hasBody = method !== "GET" && method !== "HEAD";
  return {
    method,
    headers: { ...(hasBody ? { "content-type": "application/x-www-form-urlencoded" } : {}), ...headers },
    ...(hasBody ? { body: "id=x&back=%2F&token=guess&kind=k" } : {}),
  };
}

/** What a browser sends for a page of another site: fetch, form post, frame, rebound name. */
const HOSTILE: { name: string; headers: Record<string, string>; methods?: string[] }[] = [
  { name: "rebound host name", headers: { host: "evil.example:8787" } },
  {
    name: "rebound host name, same-origin",
    headers: { host: "evil.example", origin: "http://evil.example" },
  },
  {
    name: "rebound host name behind a local proxy that rewrites Host",
    headers: { host: "127.0.0.1:8787", "x-forwarded-host": "evil.example" },
  },
  { name: "foreign origin", headers: { origin: "https://evil.example" } },
  { name: "opaque origin", headers: { origin: "null" } },
  {
    name: "cross-site fetch",
    headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "empty" },
  },
  {
    name: "same-site fetch",
    headers: { "sec-fetch-site": "same-site", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" },
  },
  {
    name: "cross-site frame",
    headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "iframe" },
  },
  {
    name: "cross-site form post",
    methods: ["POST", "DELETE"],
    headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" },
  },
];

describe("the cross-site guard on every route but the webhooks and the health checks", () => {
  it("knows the routes it must check (the table below is not vacuous)", async () => {
    t = await fuzzApp();
    const patterns = new Set(routesOf(t.app).map((r) => r.pattern));
    for (const expected of [
      "/",
      "/jobs",
      "/jobs/:provider/:rest{.+}",
      "/effects",
      "/effects/:id/retry",
      "/runs",
      "/login",
      "/logout",
      "/metrics",
      "/healthz",
      "/readyz",
      "/v1/jobs",
      "/v1/workers/:workerId/claim",
      "/webhooks/:provider",
    ])
      expect(patterns, expected).toContain(expected);
  });

  it("without a token: every hostile request is 403 on every guarded route, and nothing stored changes", async () => {
    t = await fuzzApp({ effects: [{ name: "notify", url: "http://127.0.0.1:9/hook", secret: SECRET }] });
    await t.finality.ingest({ provider: "acme", id: "job-1", state: "succeeded", source: "webhook" });
    const before = await ledgerSnapshot(t.finality);
    expect(before).toContain("effect:");
    let checked = 0;
    for (const route of routesOf(t.app)) {
      for (const hostile of HOSTILE) {
        if (hostile.methods && !hostile.methods.includes(route.method)) continue;
        const response = await t.app.request(`${BASE}${route.path}`, init(route.method, hostile.headers));
        const what = `${route.method} ${route.path} with ${hostile.name}`;
        if (isUnguardedPath(route.path)) {
          expect(response.status, what).not.toBe(403);
          continue;
        }
        expect(response.status, what).toBe(403);
        expect(response.headers.get("content-type"), what).toContain("application/problem+json");
        expect(await response.json(), what).toMatchObject({ code: "forbidden" });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(100);
    expect(await ledgerSnapshot(t.finality)).toBe(before);
  });

  it("the same requests without the hostile headers are not refused (the 403 above is the guard's)", async () => {
    t = await fuzzApp();
    for (const route of routesOf(t.app)) {
      const response = await t.app.request(`${BASE}${route.path}`, init(route.method, {}));
      expect(response.status, `${route.method} ${route.path}`).not.toBe(403);
      const same = await t.app.request(
        `${BASE}${route.path}`,
        init(route.method, { origin: BASE, "sec-fetch-site": "same-origin" }),
      );
      expect(same.status, `${route.method} ${route.path} same-origin`).not.toBe(403);
    }
  });

  it("a rebound host name cannot read a job's page nor retry its effect through the dashboard's form", async () => {
    t = await fuzzApp({ effects: [{ name: "notify", url: "http://127.0.0.1:9/hook", secret: SECRET }] });
    await t.finality.ingest({
      provider: "acme",
      id: "job-1",
      state: "succeeded",
      source: "webhook",
      result: { secret: "the-result-of-job-1" },
    });
    const effect = (await engineOf(t.finality).store.listEffects({ limit: 10 })).items[0];
    if (!effect) throw new Error("expected the job's effect");
    const before = await ledgerSnapshot(t.finality);
    const evil = { host: "evil.example:8787" };

    const page = await t.app.request(`${BASE}/jobs/acme/job-1`, { headers: evil });
    expect(page.status).toBe(403);
    expect(await page.text()).not.toContain("the-result-of-job-1");
    const retry = await t.app.request(`${BASE}/effects/${effect.id}/retry`, {
      method: "POST",
      headers: {
        ...evil,
        origin: "http://evil.example:8787",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "back=%2F",
    });
    expect(retry.status).toBe(403);
    expect(await ledgerSnapshot(t.finality)).toBe(before);

    // The same page and form from the dashboard itself still work.
    const own = await t.app.request(`${BASE}/jobs/acme/job-1`);
    expect(own.status).toBe(200);
    expect(await own.text()).toContain("the-result-of-job-1");
    const ownRetry = await t.app.request(`${BASE}/effects/${effect.id}/retry`, {
      method: "POST",
      headers: { origin: BASE, "content-type": "application/x-www-form-urlencoded" },
      body: "back=%2F",
    });
    expect(ownRetry.status).toBe(303);
  });

  it("a link from another site opens a dashboard page (a top-level GET navigation), never the API", async () => {
    t = await fuzzApp();
    const link = {
      "sec-fetch-site": "cross-site",
      "sec-fetch-mode": "navigate",
      "sec-fetch-dest": "document",
    };
    for (const path of ["/", "/jobs", "/effects", "/runs", "/login"])
      expect((await t.app.request(`${BASE}${path}`, { headers: link })).status, path).toBeLessThan(400);
    expect((await t.app.request(`${BASE}/v1/jobs`, { headers: link })).status).toBe(403);
    // The host name is still checked for a link.
    const rebound = await t.app.request(`${BASE}/jobs`, { headers: { ...link, host: "evil.example" } });
    expect(rebound.status).toBe(403);
  });

  it("webhooks and health checks answer under any host name (a provider, a load balancer)", async () => {
    t = await fuzzApp();
    const body = JSON.stringify({ jobId: "from-a-provider", state: "running" });
    const webhook = await t.app.request(`${BASE}/webhooks/acme`, {
      method: "POST",
      headers: { ...signWith(SECRET, body), host: "ledger.example.com" },
      body,
    });
    expect(webhook.status).toBe(200);
    for (const path of ["/healthz", "/readyz"])
      expect((await t.app.request(`${BASE}${path}`, { headers: { host: "lb.internal" } })).status, path).toBe(
        200,
      );
  });

  it("with a token: the host name is not checked, the origin and the site still are", async () => {
    t = await fuzzApp({ apiToken: TOKEN });
    const auth = { authorization: `Bearer ${TOKEN}`, host: "ledger.example" };
    for (const path of ["/", "/jobs", "/effects", "/runs", "/metrics", "/v1/jobs"]) {
      const url = `https://ledger.example${path}`;
      expect((await t.app.request(url, { headers: auth })).status, path).toBe(200);
      const foreign = await t.app.request(url, { headers: { ...auth, origin: "https://evil.example" } });
      expect(foreign.status, `${path} foreign origin`).toBe(403);
      const site = await t.app.request(url, { headers: { ...auth, "sec-fetch-site": "cross-site" } });
      expect(site.status, `${path} cross-site`).toBe(403);
    }
    const login = await t.app.request("https://ledger.example/login", {
      method: "POST",
      headers: {
        host: "ledger.example",
        origin: "https://evil.example",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: `token=${TOKEN}`,
    });
    expect(login.status).toBe(403);
    expect(login.headers.get("set-cookie")).toBeNull();
  });

  it("behind a proxy that rewrites Host, the browser's own origin is in X-Forwarded-Host", async () => {
    t = await fuzzApp({ apiToken: TOKEN });
    const form = (origin: string) =>
      t!.app.request("http://127.0.0.1:8787/login", {
        method: "POST",
        headers: {
          host: "127.0.0.1:8787",
          "x-forwarded-host": "ledger.example",
          origin,
          "content-type": "application/x-www-form-urlencoded",
        },
        body: `token=${TOKEN}&next=%2Fjobs`,
      });
    expect((await form("https://ledger.example")).status).toBe(303);
    expect((await form("https://evil.example")).status).toBe(403);
  });
});

/** One request over a real socket with the Host header as given (fetch does not let it be set). */
function overHttp(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; text: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("the guard on a real finality serve (the Node fast path takes the webhooks only)", () => {
  it("refuses a rebound host name on the dashboard, the API and /metrics; webhooks and health still answer", async () => {
    const dir = tempDir("finality-guard-");
    const service = await serveWith(dir, dir.file("guard.db"), {
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
    });
    try {
      const evil = { host: `evil.example:${new URL(service.url).port}` };
      const body = JSON.stringify({ jobId: "job-1", state: "succeeded", result: { secret: "result-1" } });
      // Through the fast path, under a name that is not this service's: a provider's own delivery.
      const webhook = await overHttp(
        service.url,
        "POST",
        "/webhooks/acme",
        {
          ...signWith(SECRET, body),
          ...evil,
        },
        body,
      );
      expect(webhook.status).toBe(200);
      for (const path of [
        "/",
        "/jobs",
        "/jobs/acme/job-1",
        "/effects",
        "/runs",
        "/metrics",
        "/v1/jobs/acme/job-1",
      ]) {
        const answer = await overHttp(service.url, "GET", path, evil);
        expect(answer.status, path).toBe(403);
        expect(answer.text, path).not.toContain("result-1");
      }
      const form = { ...evil, "content-type": "application/x-www-form-urlencoded" };
      for (const path of ["/login", "/logout", "/effects/x/retry"])
        expect((await overHttp(service.url, "POST", path, form, "back=%2F")).status, path).toBe(403);
      for (const path of ["/healthz", "/readyz"])
        expect((await overHttp(service.url, "GET", path, evil)).status, path).toBe(200);
      // The service's own name still reads the page.
      const own = await overHttp(service.url, "GET", "/jobs/acme/job-1", {});
      expect(own.status).toBe(200);
      expect(own.text).toContain("result-1");
      // Every refusal is counted, under its own bounded route label.
      const metrics = await overHttp(service.url, "GET", "/metrics", {});
      expect(metrics.text).toMatch(
        /finality_http_requests_total\{route="cross-site-guard",method="GET",status="403"\} 7\b/,
      );
    } finally {
      await service.stop();
      dir.cleanup();
    }
  });
});
