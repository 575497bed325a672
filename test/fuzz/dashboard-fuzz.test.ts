import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { engineOf } from "../helpers/engine.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { fuzzApp, InputCounter, ledgerSnapshot } from "./fuzz-app.js";

// The dashboard's pages and forms (and the other routes beside them) under every mix of Host,
// Origin, X-Forwarded-Host and Sec-Fetch-* a browser, a proxy or a rebound page could send. The
// oracle is built from how each header value was drawn (a loopback name or not, this origin or
// another), not from the guard's code: whatever a browser page of another site could send is
// refused 403 and changes nothing stored; the service's own pages and forms still work.

const TOKEN = "a-token-of-sixteen-chars";
const counter = new InputCounter();
afterAll(() => console.log(counter.report("dashboard and forms under foreign Host, Origin, Sec-Fetch-Site")));

type App = Awaited<ReturnType<typeof fuzzApp>>;

interface Drawn<T> {
  value: T;
  /** True when a page of another site (or a rebound name) is what would send it. */
  foreign: boolean;
}

const LOOPBACK_HOSTS = [
  "127.0.0.1:8787",
  "localhost:8787",
  "[::1]:8787",
  "127.9.8.7",
  "LOCALHOST",
  "localhost",
];
const FOREIGN_HOSTS = [
  "evil.example",
  "evil.example:8787",
  "127.0.0.1.evil.example",
  "localhost.evil.example:8787",
  "[::2]:8787",
  "0.0.0.0:8787",
  "10.0.0.1",
  "127.0.0.1.",
  "",
];

const host: fc.Arbitrary<Drawn<string>> = fc.oneof(
  fc.constantFrom(...LOOPBACK_HOSTS).map((value) => ({ value, foreign: false })),
  fc.constantFrom(...FOREIGN_HOSTS).map((value) => ({ value, foreign: true })),
);

/** An Origin relative to the Host drawn: absent, this one, or another. */
type OriginKind = "absent" | "same" | "foreign";
const originKind = fc.constantFrom<OriginKind>("absent", "same", "same", "foreign");
// Never one of the hosts drawn above: an Origin equal to the Host is that host's own.
const FOREIGN_ORIGINS = [
  "https://attacker.example",
  "http://attacker.example:8787",
  "null",
  "not a url",
  "http://127.0.0.1:1",
  "file://",
];

type Site = "absent" | "same-origin" | "none" | "same-site" | "cross-site" | "bogus";
const site = fc.constantFrom<Site>("absent", "same-origin", "none", "same-site", "cross-site", "bogus");
const mode = fc.constantFrom("navigate", "cors", "no-cors", "same-origin", undefined);
const dest = fc.constantFrom("document", "iframe", "empty", "image", undefined);

type Target = { method: string; path: string; kind: "page" | "form" | "api" | "metrics" | "open" };

function targets(effectId: string): fc.Arbitrary<Target> {
  return fc.constantFrom<Target>(
    { method: "GET", path: "/", kind: "page" },
    { method: "GET", path: "/jobs?state=succeeded", kind: "page" },
    { method: "GET", path: "/jobs/acme/job-1", kind: "page" },
    { method: "HEAD", path: "/jobs/acme/job-1", kind: "page" },
    { method: "GET", path: "/effects?status=pending", kind: "page" },
    { method: "GET", path: "/runs", kind: "page" },
    { method: "GET", path: "/login?next=%2Fjobs", kind: "page" },
    { method: "GET", path: "/no-such-page", kind: "page" },
    { method: "POST", path: `/effects/${effectId}/retry`, kind: "form" },
    { method: "POST", path: "/effects/no-such-effect/retry", kind: "form" },
    { method: "POST", path: "/login", kind: "form" },
    { method: "POST", path: "/logout", kind: "form" },
    { method: "DELETE", path: "/jobs", kind: "form" },
    { method: "GET", path: "/metrics", kind: "metrics" },
    { method: "GET", path: "/v1/jobs", kind: "api" },
    { method: "POST", path: "/v1/runs", kind: "api" },
    { method: "GET", path: "/healthz", kind: "open" },
    { method: "GET", path: "/readyz", kind: "open" },
  );
}

const request = (effectId: string) =>
  fc.record({
    target: targets(effectId),
    host,
    originKind,
    foreignOrigin: fc.constantFrom(...FOREIGN_ORIGINS),
    scheme: fc.constantFrom("http", "https"),
    forwarded: fc.constantFrom<"absent" | "browser-host" | "other">(
      "absent",
      "absent",
      "browser-host",
      "other",
    ),
    site,
    mode,
    dest,
    bearer: fc.boolean(),
  });

type Drawn$ = ReturnType<typeof request> extends fc.Arbitrary<infer R> ? R : never;

function headersOf(r: Drawn$, withToken: boolean): Record<string, string> {
  const headers: Record<string, string> = { host: r.host.value };
  if (r.originKind === "same") headers.origin = `${r.scheme}://${r.host.value}`;
  if (r.originKind === "foreign") headers.origin = r.foreignOrigin;
  // A proxy that rewrote Host names the browser's host here: the Origin is then that one's.
  if (r.forwarded === "browser-host" && r.originKind === "same") {
    headers["x-forwarded-host"] = r.host.value;
    headers.host = "127.0.0.1:8787";
  }
  if (r.forwarded === "other") headers["x-forwarded-host"] = "proxy.example";
  if (r.site !== "absent") headers["sec-fetch-site"] = r.site;
  if (r.mode) headers["sec-fetch-mode"] = r.mode;
  if (r.dest) headers["sec-fetch-dest"] = r.dest;
  if (withToken && r.bearer) headers.authorization = `Bearer ${TOKEN}`;
  if (r.target.method === "POST") headers["content-type"] = "application/x-www-form-urlencoded";
  return headers;
}

/** What the guard must do, from how the request was drawn. */
function mustRefuse(r: Drawn$, withToken: boolean): boolean {
  if (r.target.kind === "open") return false;
  // Every name the request carries: Host, and what a proxy put in X-Forwarded-Host.
  const names = [r.host.value];
  if (r.forwarded === "other") names.push("proxy.example");
  const hostForeign = names.some((name) => FOREIGN_HOSTS.includes(name) || name === "proxy.example");
  if (!withToken && hostForeign) return true;
  // An empty Host leaves no origin to match ("http://" is no URL).
  if (r.originKind === "foreign" || (r.originKind === "same" && r.host.value === "")) return true;
  const fromAnotherSite = r.site === "cross-site" || r.site === "same-site";
  const topLevelRead =
    r.target.kind !== "api" &&
    (r.target.method === "GET" || r.target.method === "HEAD") &&
    r.mode === "navigate" &&
    r.dest === "document";
  return fromAnotherSite && !topLevelRead;
}

async function seeded(options: { apiToken?: string }): Promise<{ t: App; effectId: string }> {
  const t = await fuzzApp({
    ...options,
    effects: [{ name: "notify", url: "http://127.0.0.1:9/hook", secret: SECRET }],
  });
  await t.finality.ingest({ provider: "acme", id: "job-1", state: "succeeded", source: "webhook" });
  const effect = (await engineOf(t.finality).store.listEffects({ limit: 10 })).items[0];
  if (!effect) throw new Error("expected the job's effect");
  return { t, effectId: effect.id };
}

for (const withToken of [false, true]) {
  describe(`the dashboard's routes and forms ${withToken ? "with" : "without"} an API token`, () => {
    let t: App;
    let effectId: string;
    beforeAll(async () => {
      ({ t, effectId } = await seeded(withToken ? { apiToken: TOKEN } : {}));
      return () => t.close();
    });

    it("refuses with 403 whatever another site could send, changes nothing then, and never answers 5xx", async () => {
      let refused = 0;
      let allowed = 0;
      await fc.assert(
        fc.asyncProperty(request(effectId), async (r) => {
          const before = await ledgerSnapshot(t.finality);
          const headers = headersOf(r, withToken);
          const post = r.target.method === "POST" || r.target.method === "DELETE";
          const body = r.target.path === "/login" ? `token=${TOKEN}&next=%2F` : "back=%2Feffects";
          const url = `${r.scheme}://127.0.0.1:8787${r.target.path}`;
          const response = await t.app.request(url, {
            method: r.target.method,
            headers,
            ...(post ? { body } : {}),
          });
          await response.arrayBuffer();
          counter.add(
            `${withToken ? "token" : "loopback"} ${r.target.method} ${r.target.kind}`,
            response.status,
          );
          expect(response.status).toBeLessThan(500);
          const what = JSON.stringify({ ...r.target, headers });
          if (mustRefuse(r, withToken)) {
            refused++;
            expect(response.status, what).toBe(403);
            expect(await ledgerSnapshot(t.finality), what).toBe(before);
            expect(response.headers.get("set-cookie"), what).toBeNull();
          } else {
            allowed++;
            expect(response.status, what).not.toBe(403);
          }
          if (response.status === 403) expect(await ledgerSnapshot(t.finality), what).toBe(before);
        }),
        { numRuns: 800 },
      );
      // Both sides of the oracle were exercised, often.
      expect(refused).toBeGreaterThan(300);
      expect(allowed).toBeGreaterThan(100);
    });

    it("the service's own retry form still re-arms the effect (what the refusals above protect)", async () => {
      const before = await ledgerSnapshot(t.finality);
      const response = await t.app.request(`http://127.0.0.1:8787/effects/${effectId}/retry`, {
        method: "POST",
        headers: {
          host: "127.0.0.1:8787",
          origin: "http://127.0.0.1:8787",
          "sec-fetch-site": "same-origin",
          "content-type": "application/x-www-form-urlencoded",
          ...(withToken ? { authorization: `Bearer ${TOKEN}` } : {}),
        },
        body: "back=%2Feffects",
      });
      expect(response.status).toBe(303);
      expect(await ledgerSnapshot(t.finality)).not.toBe(before);
    });
  });
}
