import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signStandardWebhook } from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { hostileBody } from "../fuzz/arbitraries.js";
import { InputCounter } from "../fuzz/fuzz-app.js";
import { rawPost } from "../helpers/raw-post.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { startWorkerLedger, TEST_API_TOKEN, type WorkerLedger } from "./helpers/worker-ledger.js";

const LIMIT = 16 * 1024;
const UNCAUGHT = /uncaught exception|Can't read from request stream/;

/** Where an unsigned caller can send a body, with the headers it might send. */
const TARGETS = [
  { path: "/webhooks/acme", headers: () => signWith(SECRET, "") },
  { path: "/webhooks/nobody", headers: () => signWith(SECRET, "") },
  { path: "/v1/jobs", headers: () => ({ authorization: `Bearer ${TEST_API_TOKEN}` }) },
  { path: "/v1/jobs", headers: () => ({}) },
  { path: "/v1/runs", headers: () => ({ authorization: `Bearer ${TEST_API_TOKEN}` }) },
  { path: "/", headers: () => ({ "content-type": "application/x-www-form-urlencoded" }) },
] as const;

/**
 * The fuzzers ran against `finality serve` and the in-process app only, and a body over the limit
 * did no harm there; on the Worker it made workerd throw outside any handler, which Cloudflare
 * answers by restarting the isolate. Here the Worker (on its own socket) gets hostile bodies,
 * bodies of every size up to well past the limit, with and without a Content-Length, to every
 * route that takes one, each followed by a signed webhook that must still get its 200.
 */
describe("fuzzing the Worker's request bodies (workerd)", () => {
  const counter = new InputCounter();
  let worker: WorkerLedger;
  beforeAll(async () => {
    worker = await startWorkerLedger(
      {
        server: { bodyLimitBytes: LIMIT },
        providers: { acme: { type: "generic", webhook: { secrets: ["env:ACME_WEBHOOK_SECRET"] } } },
        log: { level: "error" },
      },
      { ACME_WEBHOOK_SECRET: SECRET },
    );
  });
  afterAll(async () => {
    console.log(counter.report("the Worker in workerd"));
    await worker?.dispose();
  });

  let jobs = 0;
  const signedWebhook = async () => {
    const body = JSON.stringify({ jobId: `fuzz-${++jobs}`, state: "running" });
    const response = await fetch(new URL("/webhooks/acme", worker.url), {
      method: "POST",
      headers: signWith(SECRET, body),
      body,
    });
    await response.arrayBuffer();
    return response.status;
  };

  it("any body size, framing and route: no 5xx, no dropped answer, and the next webhook gets its 200", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...TARGETS),
        fc.oneof(fc.integer({ min: 0, max: 2 * LIMIT }), fc.integer({ min: LIMIT, max: 4 * 1024 * 1024 })),
        fc.boolean(),
        async (target, bytes, chunked) => {
          const answer = await rawPost(worker.url, target.path, target.headers(), { bytes, chunked });
          counter.add(`${chunked ? "chunked" : "sized"} body to ${target.path}`, answer.status);
          expect(answer.error ?? null).toBeNull();
          expect(answer.status).toBeGreaterThanOrEqual(200);
          expect(answer.status).toBeLessThan(500);
          if (bytes > LIMIT && target.path === "/webhooks/acme") expect(answer.status).toBe(413);
          expect(await signedWebhook()).toBe(200);
        },
      ),
      { numRuns: 60 },
    );
    await fc.assert(
      fc.asyncProperty(hostileBody(LIMIT, 2_000), async (body) => {
        const headers = signStandardWebhook({
          id: `hostile_${++jobs}`,
          timestampSeconds: Date.now() / 1000,
          body,
          secret: SECRET,
        });
        const response = await fetch(new URL("/webhooks/acme", worker.url), {
          method: "POST",
          headers: { ...headers },
          body,
        });
        await response.arrayBuffer();
        counter.add("signed hostile body", response.status);
        expect([200, 400, 413]).toContain(response.status);
      }),
      { numRuns: 60 },
    );
    expect(worker.runtimeLog.filter((line) => UNCAUGHT.test(line))).toEqual([]);
  });
});
