import { afterEach, describe, expect, it } from "vitest";
import { localPath } from "../../src/dashboard/dashboard-auth.js";
import { crossSiteRefusal } from "../../src/http/cross-site-guard.js";
import { ACME, type InProcess, inProcessApp } from "./helpers/in-process.js";

let t: InProcess | null = null;
afterEach(async () => {
  await t?.close();
  t = null;
});

const register = (headers: Record<string, string>) => ({
  method: "POST",
  headers: { "content-type": "text/plain", ...headers },
  body: JSON.stringify({ provider: "acme", id: "from-a-page" }),
});

describe("what a web page could send to the API through the user's browser", () => {
  it("is refused 403 without a token (loopback): another site, another origin, a rebound host name", async () => {
    t = await inProcessApp({ providers: { acme: ACME } });
    const refused: Record<string, string>[] = [
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "same-site" },
      { origin: "https://evil.example" },
      { origin: "null" },
      { host: "evil.example:8787" },
    ];
    for (const headers of refused) {
      const response = await t.app.request("http://127.0.0.1:8787/v1/jobs", register(headers));
      expect(response.status, JSON.stringify(headers)).toBe(403);
      expect(await response.json()).toMatchObject({ code: "forbidden" });
    }
    expect(await t.finality.getJob({ provider: "acme", id: "from-a-page" })).toBeNull();
  });

  it("lets through the same origin, browsers' own navigation and every client that is not a browser", async () => {
    t = await inProcessApp({ providers: { acme: ACME } });
    const allowed: Record<string, string>[] = [
      {},
      { host: "localhost:8787", origin: "http://localhost:8787", "sec-fetch-site": "same-origin" },
      { host: "[::1]:8787" },
      { "sec-fetch-site": "none" },
    ];
    for (const headers of allowed) {
      const response = await t.app.request("http://127.0.0.1:8787/v1/jobs", register(headers));
      expect(response.status, JSON.stringify(headers)).toBeLessThan(300);
    }
  });

  it("with an API token, checks the origin but not the host name (a public service has its own)", async () => {
    const token = "a-token-of-sixteen-chars";
    t = await inProcessApp({ server: { apiToken: token }, providers: { acme: ACME } });
    const auth = { authorization: `Bearer ${token}` };
    expect(
      (await t.app.request("https://ledger.example/v1/jobs", register({ ...auth, host: "ledger.example" })))
        .status,
    ).toBe(201);
    const foreign = register({ ...auth, host: "ledger.example", origin: "https://evil.example" });
    expect((await t.app.request("https://ledger.example/v1/jobs", foreign)).status).toBe(403);
  });
});

describe("the dashboard's return path after login", () => {
  it("is a local path, never another site however it is spelt", () => {
    expect(localPath("/jobs?state=running")).toBe("/jobs?state=running");
    for (const hostile of [
      "//evil.example",
      "/\\evil.example",
      "/\t/evil.example",
      "/\n/evil",
      "https://evil.example",
      "/login?next=/x",
      "",
    ])
      expect(localPath(hostile), JSON.stringify(hostile)).toBe("/");
  });
});

describe("regressions the dashboard fuzzer found (test/fuzz/dashboard-fuzz.test.ts)", () => {
  const loopbackOnly = { loopbackOnly: true, allowNavigation: true };
  it("a rebound name behind a local proxy that rewrote Host is refused without a token", () => {
    const behindProxy = { method: "GET", host: "127.0.0.1:8787", forwardedHost: "evil.example" };
    expect(crossSiteRefusal(behindProxy, loopbackOnly)).toMatch(/loopback host names only/);
    expect(crossSiteRefusal({ ...behindProxy, forwardedHost: "localhost:8787" }, loopbackOnly)).toBeNull();
    // With a token the name is the service's own, and the browser's Origin may be that name.
    expect(
      crossSiteRefusal(
        { ...behindProxy, forwardedHost: "ledger.example", origin: "https://ledger.example" },
        { loopbackOnly: false },
      ),
    ).toBeNull();
  });

  it("compares host names as the URL parser writes them, and an origin without a host never matches", () => {
    const token = { loopbackOnly: false };
    expect(
      crossSiteRefusal({ method: "POST", host: "127.0.0.1.", origin: "http://127.0.0.1." }, token),
    ).toBeNull();
    expect(
      crossSiteRefusal({ method: "POST", host: "LEDGER.example", origin: "https://ledger.example" }, token),
    ).toBeNull();
    expect(crossSiteRefusal({ method: "POST", host: "", origin: "file://" }, token)).toMatch(
      /another origin/,
    );
    expect(crossSiteRefusal({ method: "POST", host: "", origin: "null" }, token)).toMatch(/another origin/);
  });
});
