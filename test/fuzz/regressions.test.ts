import { describe, expect, it } from "vitest";
import { signStandardWebhook } from "../../src/webhooks/standard-webhooks.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { fuzzApp } from "./fuzz-app.js";

/** Bugs the fuzzer found, kept as regression tests once fixed. */
describe("regressions found by fuzzing", () => {
  it("a signed webhook whose result nests 5,000 arrays deep is refused (400/413), not answered 500", async () => {
    // JSON.parse accepts the body, but JSON.stringify of `result` overflowed the stack when the job
    // was stored: a 500 that the sender retried forever. Values deeper than LIMITS.jsonDepth are refused.
    const t = await fuzzApp();
    try {
      const depth = 5_000;
      const body = `{"jobId":"deep","state":"running","result":${"[".repeat(depth)}${"]".repeat(depth)}}`;
      const headers = signStandardWebhook({
        id: "deep-1",
        timestampSeconds: Date.now() / 1000,
        body,
        secret: SECRET,
      });
      const response = await t.app.request("/webhooks/acme", {
        method: "POST",
        headers: { ...headers },
        body,
      });
      expect([400, 413]).toContain(response.status);
    } finally {
      await t.close();
    }
  });
});
