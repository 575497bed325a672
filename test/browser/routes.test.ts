import { afterEach, describe, expect, it } from "vitest";
import { ACME, type InProcess, inProcessApp } from "../http/helpers/in-process.js";
import { TOKEN } from "./helpers/ledger.js";

// The dashboard's routes through app.request(), without a browser: they sit beside the API and
// change nothing about it, and their sign-in rules hold for callers that are not browsers.

let current: InProcess | null = null;
afterEach(async () => {
  await current?.close();
  current = null;
});

async function app(apiToken?: string) {
  current = await inProcessApp({ providers: { acme: ACME }, ...(apiToken ? { server: { apiToken } } : {}) });
  return current.app;
}

const form = (fields: Record<string, string>, headers: Record<string, string> = {}): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  body: new URLSearchParams(fields).toString(),
});

describe("dashboard routes", () => {
  it.each(["/", "/jobs", "/jobs?state=running&limit=25", "/effects", "/effects?status=dead", "/runs"])(
    "%s answers a page",
    async (path) => {
      const response = await (await app()).request(path);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/html");
      expect(await response.text()).toMatch(/^<!DOCTYPE html><html lang="en">/);
    },
  );

  it("an unknown job is a 404 page; the live part alone comes back for the refresh script", async () => {
    const a = await app();
    const missing = await a.request("/jobs/acme/operations%2Fnope");
    expect(missing.status).toBe(404);
    expect(await missing.text()).toContain("No job acme / operations/nope");
    const fragment = await a.request("/", { headers: { "x-finality-fragment": "1" } });
    expect(await fragment.text()).toMatch(/^<h1>Overview<\/h1>/);
    expect(fragment.headers.get("vary")).toBe("x-finality-fragment");
  });

  it("leaves the API, webhooks, health and metrics as they were", async () => {
    const a = await app();
    expect(await (await a.request("/v1/jobs")).json()).toEqual({ items: [], nextCursor: null });
    expect(await (await a.request("/healthz")).json()).toEqual({ status: "ok" });
    expect((await a.request("/metrics")).headers.get("content-type")).toContain("text/plain");
    const unsigned = await a.request("/webhooks/acme", { method: "POST", body: "{}" });
    expect(unsigned.status).toBe(401);
    expect(unsigned.headers.get("content-type")).toContain("application/problem+json");
    const unmatched = await a.request("/nothing-here");
    expect(unmatched.status).toBe(404);
    expect(unmatched.headers.get("content-type")).toContain("application/problem+json");
  });
});

describe("dashboard sign-in with server.apiToken", () => {
  it("sends a browser to the login form, and answers 401 to the refresh script and to forms", async () => {
    const a = await app(TOKEN);
    const page = await a.request("/jobs?state=running");
    expect(page.status).toBe(303);
    expect(page.headers.get("location")).toBe(`/login?next=${encodeURIComponent("/jobs?state=running")}`);
    expect((await a.request("/", { headers: { "x-finality-fragment": "1" } })).status).toBe(401);
    expect((await a.request("/effects/e1/retry", form({ back: "/" }))).status).toBe(401);
    expect((await a.request("/", { headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(200);
  });

  it("refuses a wrong token, and sets an HttpOnly session cookie for the right one", async () => {
    const a = await app(TOKEN);
    const wrong = await a.request("/login", form({ token: "wrong-token-wrong-token", next: "/effects" }));
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).toContain("That token is not correct");
    expect(wrong.headers.get("set-cookie")).toBeNull();

    const right = await a.request("/login", form({ token: TOKEN, next: "/effects" }));
    expect(right.status).toBe(303);
    expect(right.headers.get("location")).toBe("/effects");
    const cookie = right.headers.get("set-cookie") ?? "";
    expect(cookie).toMatch(/^finality_session=[\w-]+; Max-Age=43200; Path=\/; HttpOnly; SameSite=Strict$/);
    expect(cookie).not.toContain(TOKEN);
    const session = cookie.split(";")[0] as string;
    expect((await a.request("/effects", { headers: { cookie: session } })).status).toBe(200);
    // The cookie is the dashboard's; the API still wants the bearer token.
    expect((await a.request("/v1/jobs", { headers: { cookie: session } })).status).toBe(401);
  });

  it("never redirects off the site after login, and refuses forms from another origin", async () => {
    const a = await app(TOKEN);
    for (const next of ["//evil.example", "https://evil.example/", "/\\evil.example"]) {
      const answer = await a.request("/login", form({ token: TOKEN, next }));
      expect(answer.headers.get("location"), next).toBe("/");
    }
    const login = await a.request("/login", form({ token: TOKEN }));
    const session = (login.headers.get("set-cookie") ?? "").split(";")[0] as string;
    const foreign = await a.request(
      "http://localhost/effects/e1/retry",
      form({ back: "/effects" }, { cookie: session, origin: "https://evil.example" }),
    );
    // Refused by the cross-site guard before the form is read (http/cross-site-guard.ts).
    expect(foreign.status).toBe(403);
    expect(await foreign.json()).toMatchObject({ code: "forbidden" });
    const own = await a.request(
      "http://localhost/effects/e1/retry",
      form(
        { back: "/effects?status=dead" },
        { cookie: session, origin: "http://localhost", host: "localhost" },
      ),
    );
    expect(own.status).toBe(303);
    expect(own.headers.get("location")).toBe("/effects?status=dead&retry-error=not-found");
  });
});
