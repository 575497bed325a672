import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { FinalityError } from "../../src/core/errors.js";
import type { StandardWebhookHeaders } from "../../src/webhooks/schemes/standard-webhooks/header.js";
import { signStandardWebhook } from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { signStandardWebhookWeb } from "../../src/webhooks/web-verifiers.js";

// Outgoing effects are signed with WebCrypto (http-effect-target.ts): byte for byte what
// node:crypto signs, so a receiver sees no difference between a Node and a Workers sender.

const secret = fc.oneof(
  fc
    .uint8Array({ minLength: 1, maxLength: 64 })
    .map((bytes) => `whsec_${Buffer.from(bytes).toString("base64")}`),
  fc.string({ minLength: 1, maxLength: 80, unit: "grapheme" }),
  fc.string({ maxLength: 20 }).map((text) => `whsec_${text}`),
);
/** The headers, or the error's code and message (a secret that decodes to nothing is refused). */
async function signed(sign: () => StandardWebhookHeaders | Promise<StandardWebhookHeaders>) {
  try {
    return { headers: await sign() };
  } catch (error) {
    if (!(error instanceof FinalityError)) throw error;
    return { refused: { code: error.code, message: error.message } };
  }
}

const body = fc.oneof(fc.string({ maxLength: 400, unit: "grapheme" }), fc.uint8Array({ maxLength: 400 }));

describe("signStandardWebhookWeb", () => {
  it("gives the same headers as signStandardWebhook", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 60, unit: "grapheme" }),
        fc.double({ min: 0, max: 1e11, noNaN: true }),
        body,
        secret,
        async (id, timestampSeconds, payload, key) => {
          const input = { id, timestampSeconds, body: payload, secret: key };
          expect(await signed(() => signStandardWebhookWeb(input))).toEqual(
            await signed(() => signStandardWebhook(input)),
          );
        },
      ),
      { numRuns: 500 },
    );
  });

  it("signs a known vector", async () => {
    const input = {
      id: "msg_1",
      timestampSeconds: 1_700_000_000.9,
      body: "{}",
      secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    };
    expect(await signStandardWebhookWeb(input)).toEqual(signStandardWebhook(input));
    expect((await signStandardWebhookWeb(input))["webhook-timestamp"]).toBe("1700000000");
  });
});
