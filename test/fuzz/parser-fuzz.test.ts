import fc from "fast-check";
import { afterAll, describe, expect, it, vi } from "vitest";
import { isFinalityError } from "../../src/core/errors.js";
import type { Job } from "../../src/core/model.js";
import { parseRetryAfter } from "../../src/engine/poller.js";
import { createGenericPoller } from "../../src/providers/generic/generic-poller.js";
import { parseGenericWebhook } from "../../src/providers/generic/generic-webhook.js";
import {
  createStandardWebhookVerifier,
  signStandardWebhook,
} from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { assertPrototypesClean, hostileBody } from "./arbitraries.js";
import { InputCounter } from "./fuzz-app.js";

const counter = new InputCounter();
afterAll(() => console.log(counter.report("provider parsers")));

const PARSE_CODES = ["invalid-observation", "payload-too-large"];

describe("fuzzing the provider parsers", () => {
  it("the generic webhook parser returns a well-formed observation or refuses with a FinalityError", () => {
    fc.assert(
      fc.property(hostileBody(600_000), (body) => {
        counter.add("parseGenericWebhook");
        let observation: ReturnType<typeof parseGenericWebhook>;
        try {
          observation = parseGenericWebhook(body, "acme", "delivery-1");
        } catch (error) {
          if (!isFinalityError(error) || !PARSE_CODES.includes(error.code)) throw error;
          return;
        }
        expect(typeof observation.id).toBe("string");
        expect(observation.id.length).toBeGreaterThan(0);
        expect(typeof observation.state).toBe("string");
        if (observation.seq !== undefined)
          expect(Number.isSafeInteger(observation.seq) && observation.seq >= 0).toBe(true);
        if (observation.updateTime !== undefined) expect(Number.isFinite(observation.updateTime)).toBe(true);
        expect(Object.getPrototypeOf(observation)).toBe(Object.prototype);
        assertPrototypesClean();
      }),
      { numRuns: 3000 },
    );
  });

  it("the Standard Webhooks verifier accepts only the exact signed bytes and headers", () => {
    const verifier = createStandardWebhookVerifier({ secrets: [SECRET], now: () => 1_767_225_600_000 });
    const text = fc.string({ maxLength: 60 });
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        text,
        text,
        fc.option(text),
        fc.boolean(),
        (body, id, timestamp, signature, real) => {
          counter.add("standard webhooks verify");
          const headers = real
            ? (() => {
                const signed = signStandardWebhook({
                  id: id || "x",
                  timestampSeconds: 1_767_225_600,
                  body,
                  secret: SECRET,
                });
                return {
                  id: signed["webhook-id"],
                  timestamp: signed["webhook-timestamp"],
                  signature: signed["webhook-signature"],
                };
              })()
            : { id, timestamp, signature };
          try {
            const verified = verifier.verify(body, headers);
            expect(real).toBe(true);
            expect(verified.id).toBe(headers.id);
          } catch (error) {
            expect(real).toBe(false);
            expect(isFinalityError(error, "signature-invalid")).toBe(true);
          }
        },
      ),
      { numRuns: 3000 },
    );
  });

  it("the generic status poller turns any answer into a PollResult and never throws", async () => {
    const job = { provider: "acme", id: "job-1" } as Job;
    const poll = createGenericPoller("acme", { url: "http://127.0.0.1:9/jobs/{id}" });
    const answer = fc.record({
      status: fc.constantFrom(200, 200, 200, 201, 204, 301, 400, 404, 429, 500, 503),
      retryAfter: fc.option(
        fc.oneof(
          fc.string({ maxLength: 30 }),
          fc.constantFrom("1e400", "-5", "Wed, 21 Oct 2015 07:28:00 GMT", "120"),
        ),
      ),
      body: fc.oneof(
        hostileBody(600_000, 5_000),
        fc.constant(new TextEncoder().encode('{"jobId":"job-1","state":"running"}')),
      ),
    });
    const fetchSpy = vi.spyOn(globalThis, "fetch");
    try {
      await fc.assert(
        fc.asyncProperty(answer, async ({ status, retryAfter, body }) => {
          counter.add("generic poller");
          const headers: Record<string, string> =
            retryAfter === null ? {} : { "retry-after": retryAfter.replace(/[^\x20-\x7e]/g, "") };
          fetchSpy.mockResolvedValueOnce(new Response(status === 204 ? null : body, { status, headers }));
          const result = await poll(job, AbortSignal.timeout(5_000));
          expect(["observed", "not-found", "failed"]).toContain(result.kind);
          if (result.kind === "observed") expect(result.observation.id).toBe("job-1");
          if (result.kind === "failed" && result.retryAfterMs !== undefined)
            expect(Number.isFinite(result.retryAfterMs) && result.retryAfterMs >= 0).toBe(true);
        }),
        { numRuns: 1500 },
      );
    } finally {
      fetchSpy.mockRestore();
    }
  });

  it("Retry-After parsing yields a finite delay or nothing", () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string(), fc.constantFrom("1e400", "NaN", "Infinity", "-1", "0x10")),
        (value) => {
          counter.add("parseRetryAfter");
          const ms = parseRetryAfter(value, 1_767_225_600_000);
          if (ms !== undefined) expect(Number.isFinite(ms) && ms >= 0).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
