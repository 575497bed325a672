import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { IGNORE_REASONS } from "../../src/core/model.js";
import type { WebhookOutcome } from "../../src/http/service-metrics.js";
import { type WebhookAnswer, webhookAnswerJson } from "../../src/http/webhook-intake.js";

// The fast path writes the answer's JSON by hand; it must be the text JSON.stringify makes (the
// Hono route's body), for any id, provider and state, odd characters included.
const OUTCOMES: WebhookOutcome[] = [
  "applied",
  ...IGNORE_REASONS,
  "signature-invalid",
  "malformed",
  "too-large",
  "unknown-provider",
  "unavailable",
  "error",
];

const text = fc.string({ unit: "binary", maxLength: 40 });
const answers: fc.Arbitrary<WebhookAnswer> = fc.record({
  outcome: fc.constantFrom(...OUTCOMES),
  applied: fc.boolean(),
  provider: text,
  jobId: text,
  state: fc.option(text, { nil: null }),
  version: fc.option(fc.nat(), { nil: null }),
});

describe("webhookAnswerJson", () => {
  it("is JSON.stringify of the answer, byte for byte", () => {
    fc.assert(
      fc.property(answers, (answer) => {
        expect(webhookAnswerJson(answer)).toBe(JSON.stringify(answer));
      }),
      { numRuns: 2000 },
    );
  });

  it("escapes quotes, backslashes, control characters and lone surrogates as JSON.stringify does", () => {
    const answer: WebhookAnswer = {
      outcome: "applied",
      applied: true,
      provider: "acme",
      jobId: 'a"b\\c\u0000\u2028\ud800',
      state: "done:\n",
      version: 3,
    };
    expect(JSON.parse(webhookAnswerJson(answer))).toEqual(answer);
    expect(webhookAnswerJson(answer)).toBe(JSON.stringify(answer));
  });
});
