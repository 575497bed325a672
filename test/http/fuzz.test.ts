import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ACME, type InProcess, inProcessApp } from "./helpers/in-process.js";
import { SECRET, signWith } from "./helpers/webhooks.js";

let t: InProcess;
beforeAll(async () => {
  t = await inProcessApp({ server: { bodyLimitBytes: 4096 }, providers: { acme: ACME } });
});
afterAll(async () => {
  await t.close();
});

/** Everything the ledger holds, to compare before and after. */
async function snapshot() {
  const jobs = (await t.finality.listJobs({ limit: 500 })).items;
  const events = await Promise.all(jobs.map((job) => t.finality.jobEvents(job)));
  return { jobs, events };
}

// Header values must be printable to build a Request at all; everything else is fair game.
const headerValue = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
  maxLength: 80,
});
const plausibleSignature = fc.oneof(
  headerValue,
  fc
    .uint8Array({ minLength: 32, maxLength: 32 })
    .map((bytes) => `v1,${Buffer.from(bytes).toString("base64")}`),
  fc
    .array(fc.uint8Array({ minLength: 0, maxLength: 40 }), { maxLength: 4 })
    .map((list) => list.map((bytes) => `v1,${Buffer.from(bytes).toString("base64")}`).join(" ")),
);
const plausibleTimestamp = fc.oneof(
  headerValue,
  fc.integer({ min: -600, max: 600 }).map((delta) => String(Math.floor(Date.now() / 1000) + delta)),
);
const headers = fc.record(
  {
    "webhook-id": headerValue,
    "webhook-timestamp": plausibleTimestamp,
    "webhook-signature": plausibleSignature,
    "content-type": fc.constantFrom("application/json", "text/plain", ""),
    "content-length": fc.nat({ max: 10_000 }).map(String),
  },
  { requiredKeys: [] },
);
const jsonish = fc.oneof(
  fc.json(),
  fc.jsonValue().map((v) => JSON.stringify(v)),
  fc
    .record(
      {
        jobId: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
        state: fc.oneof(fc.constantFrom("pending", "running", "succeeded", "failed", "bogus"), fc.string()),
        seq: fc.oneof(fc.integer(), fc.double(), fc.string(), fc.constant(null)),
        updateTime: fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          fc.string(),
        ),
        result: fc.jsonValue(),
      },
      { requiredKeys: [] },
    )
    .map((v) => JSON.stringify(v)),
  fc.string(),
);
const body = fc.oneof(jsonish, fc.uint8Array({ maxLength: 600 }));

describe("fuzz (fast-check) against the in-process app", () => {
  it("unsigned or badly signed webhooks never get a 5xx and never change anything", async () => {
    const before = await snapshot();
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom("acme", "nobody", "ACME", "a%2Fb"),
        headers,
        body,
        async (provider, h, b) => {
          const init: RequestInit = { method: "POST", headers: h, body: b };
          const response = await t.app.request(`/webhooks/${provider}`, init);
          expect(response.status).toBeLessThan(500);
          expect(response.status).not.toBe(200);
          await response.arrayBuffer();
        },
      ),
      { numRuns: 400 },
    );
    expect(await snapshot()).toEqual(before);
  });

  it("correctly signed random bodies never get a 5xx; only a 200 may change anything", async () => {
    await fc.assert(
      fc.asyncProperty(jsonish, async (text) => {
        const before = await snapshot();
        const response = await t.app.request("/webhooks/acme", {
          method: "POST",
          headers: signWith(SECRET, text),
          body: text,
        });
        expect([200, 400, 413]).toContain(response.status);
        await response.arrayBuffer();
        if (response.status !== 200) expect(await snapshot()).toEqual(before);
      }),
      { numRuns: 300 },
    );
  });

  it("random API requests never get a 5xx", async () => {
    const path = fc.oneof(
      fc.constantFrom(
        "/v1/jobs",
        "/v1/jobs/acme/x",
        "/v1/jobs/acme/x/events",
        "/healthz",
        "/readyz",
        "/metrics",
      ),
      fc.webPath().map((p) => `/v1/jobs${p}`),
      fc.webPath(),
    );
    const query = fc.webQueryParameters().map((q) => (q ? `?${q}` : ""));
    const method = fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS");
    await fc.assert(
      fc.asyncProperty(path, query, method, jsonish, async (p, q, m, b) => {
        const withBody = m !== "GET" && m !== "HEAD";
        let response: Response;
        try {
          response = await t.app.request(`${p}${q}`, { method: m, ...(withBody ? { body: b } : {}) });
        } catch (error) {
          // A path the URL parser refuses never reaches the app.
          if (error instanceof TypeError) return;
          throw error;
        }
        expect(response.status).toBeLessThan(500);
        await response.arrayBuffer();
      }),
      { numRuns: 400 },
    );
  });
});
