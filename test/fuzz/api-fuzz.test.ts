import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assertPrototypesClean, hostileBody, hugeNumber, webhookLikeJson } from "./arbitraries.js";
import { BODY_LIMIT, fuzzApp, InputCounter } from "./fuzz-app.js";

let t: Awaited<ReturnType<typeof fuzzApp>>;
const counter = new InputCounter();
beforeAll(async () => {
  t = await fuzzApp();
});
afterAll(async () => {
  console.log(counter.report("JSON API (in-process)"));
  await t.close();
});

const segment = fc.oneof(
  fc.constantFrom(
    "acme",
    "x",
    "__proto__",
    "constructor",
    "%00",
    "%ZZ",
    "%2F",
    "a%2Fevents",
    "..",
    "%E0%A4%A",
    "events",
  ),
  fc.string({ maxLength: 30 }).map(encodeURIComponent),
  fc.nat({ max: 2000 }).map((n) => "a".repeat(n)),
);
const path = fc.oneof(
  fc.tuple(segment, segment).map(([p, id]) => `/v1/jobs/${p}/${id}`),
  fc.tuple(segment, segment).map(([p, id]) => `/v1/jobs/${p}/${id}/events`),
  fc.tuple(segment, segment).map(([p, id]) => `/v1/jobs/${p}/${id}/observations`),
  fc.tuple(segment, segment).map(([p, id]) => `/v1/jobs/${p}/${id}/replay-effects`),
  segment.map((id) => `/v1/runs/${id}`),
  segment.map((id) => `/v1/runs/${id}/cancel`),
  segment.map((id) => `/v1/effects/${id}/retry`),
  segment.map((id) => `/v1/attempts/${id}/heartbeat`),
  segment.map((id) => `/v1/attempts/${id}/events`),
  segment.map((id) => `/v1/workers/${id}/claim`),
  fc.constantFrom(
    "/v1/jobs",
    "/v1/runs",
    "/v1/effects",
    "/v1/parked",
    "/v1/settlements",
    "/healthz",
    "/readyz",
    "/metrics",
  ),
);
const queryValue = fc.oneof(
  hugeNumber,
  segment,
  fc.constantFrom("true", "false", "-1", "0", "", "[]", "a&b=c"),
);
const query = fc
  .dictionary(
    fc.constantFrom(
      "limit",
      "cursor",
      "state",
      "provider",
      "kind",
      "stuck",
      "open",
      "after",
      "status",
      "id",
      "wait",
      "__proto__",
    ),
    queryValue,
    { maxKeys: 4 },
  )
  .map((q) => {
    const text = Object.entries(q)
      .map(([k, v]) => `${k}=${v}`)
      .join("&");
    return text ? `?${text}` : "";
  });
const registration = fc
  .record({
    provider: fc.oneof(fc.constantFrom('"acme"', '"nobody"', '"__proto__"'), hugeNumber),
    id: fc.oneof(fc.constantFrom('"j1"', '"a/b"', '""', '"\\u0000"'), hugeNumber),
    extra: fc.constantFrom(
      '"__proto__":{"polluted":true}',
      '"constructor":{"prototype":{"polluted":true}}',
      '"kind":"x"',
      '"metadata":[[[[[]]]]]',
    ),
  })
  .map((r) => `{"provider":${r.provider},"id":${r.id},${r.extra}}`);
const observation = fc
  .record({
    state: fc.oneof(fc.constantFrom('"failed"', '"running"', '""', '"__proto__"'), hugeNumber),
    extra: fc.constantFrom(
      '"seq":1',
      '"seq":-1',
      '"updateTime":"2026-13-40T99:00:00Z"',
      '"result":{"__proto__":{"polluted":true}}',
      '"error":[[[[[[[[[[]]]]]]]]]]',
      '"source":"webhook"',
    ),
  })
  .map((r) => `{"state":${r.state},${r.extra}}`);
const body = fc.oneof(
  registration.map((s) => new TextEncoder().encode(s)),
  observation.map((s) => new TextEncoder().encode(s)),
  webhookLikeJson.map((s) => new TextEncoder().encode(s)),
  hostileBody(BODY_LIMIT, 2_000),
);

describe("fuzzing the JSON API", () => {
  it("any method, path, query and body: never a 5xx, never a polluted prototype", async () => {
    const method = fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS");
    await fc.assert(
      fc.asyncProperty(method, path, query, body, async (m, p, q, b) => {
        let response: Response;
        try {
          const withBody = m !== "GET" && m !== "HEAD";
          response = await t.app.request(`${p}${q}`, { method: m, ...(withBody ? { body: b } : {}) });
        } catch (error) {
          // A URL the WHATWG parser refuses never reaches the app.
          if (error instanceof TypeError) return;
          throw error;
        }
        counter.add(`${m} ${p.split("/").slice(0, 3).join("/")}`, response.status);
        expect(response.status).toBeLessThan(500);
        await response.arrayBuffer();
        assertPrototypesClean();
      }),
      { numRuns: 2000 },
    );
  });

  it("registrations with hostile fields are stored as given or refused, never half-stored", async () => {
    await fc.assert(
      fc.asyncProperty(registration, async (text) => {
        const response = await t.app.request("/v1/jobs", { method: "POST", body: text });
        counter.add("POST /v1/jobs registration", response.status);
        expect([200, 201, 400, 404]).toContain(response.status);
        const answer = (await response.json()) as Record<string, unknown>;
        if (response.status < 300) {
          const stored = await t.finality.getJob({
            provider: String(answer.provider),
            id: String(answer.id),
          });
          expect(stored?.state).toBe(answer.state);
          expect(Object.hasOwn(answer, "polluted")).toBe(false);
        }
        assertPrototypesClean();
      }),
      { numRuns: 500 },
    );
  });
});
