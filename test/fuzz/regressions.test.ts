import { describe, expect, it } from "vitest";
import { signStandardWebhook } from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { SECRET } from "../http/helpers/webhooks.js";
import { fuzzApp } from "./fuzz-app.js";

/** Bugs the fuzzer found, kept as regression tests once fixed. */
describe("regressions found by fuzzing", () => {
  it("a signed webhook whose result nests 5,000 arrays deep is applied with its result cut, not answered 500", async () => {
    // JSON.parse accepts the body, but JSON.stringify of `result` overflowed the stack when the job
    // was stored: a 500 that the sender retried forever. Then such values were refused (400), which
    // cost the job its state. Now the state is applied and the result is a marked stand-in.
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
      expect(response.status).toBe(200);
      const job = await t.finality.getJob({ provider: "acme", id: "deep" });
      expect(job).toMatchObject({ state: "running", result: { truncated: true, reason: "too-deep" } });
    } finally {
      await t.close();
    }
  });
});
