import { describe, expect, it } from "vitest";
import type { EffectDelivery } from "../../src/engine/effect-definitions.js";
import { encodeEffectMessage } from "../../src/engine/effect-message.js";
import { createHttpEffectDeliverer } from "../../src/engine/http-effect-target.js";
import { fitEffectMessage, MESSAGE_HEADROOM_BYTES, messageLimit } from "../../src/engine/message-fit.js";
import { makeJob } from "../helpers/records.js";
import { OVERSIZED } from "./broker-harness.js";

// The one place a delivery is made to fit its destination's message limit: what is cut, in what
// order, how it is marked, and that a message is never larger than the limit it was fitted to.

const bytes = (text: string) => new TextEncoder().encode(text).length;

function delivery(job: Partial<Parameters<typeof makeJob>[0]> = {}): EffectDelivery {
  return {
    type: "job.settled",
    effect: "bus",
    idempotencyKey: "fin_0123456789abcdef0123456789abcdef",
    attempt: 1,
    job: makeJob({ provider: "acme", id: "big", state: "failed", ...OVERSIZED, ...job }),
  };
}

const FORMATS = [
  { name: "bus" },
  { name: "bus", format: "cloudevents" as const },
  { name: "bus", format: "cloudevents" as const, cloudevents: { mode: "binary" as const } },
];

describe("fitting a delivery to its destination's message limit", () => {
  it("sends a message that fits whole, unmarked", () => {
    const fitted = fitEffectMessage({ name: "bus" }, delivery(), "finality://a", 4 * 1024 * 1024);
    expect(fitted.cut).toEqual([]);
    expect(fitted.body).toBe(encodeEffectMessage({ name: "bus" }, delivery(), "finality://a").body);
  });

  it("sends everything whole without a limit", () => {
    expect(fitEffectMessage({ name: "bus" }, delivery(), "finality://a", null).cut).toEqual([]);
  });

  for (const definition of FORMATS)
    it(`cuts the largest fields first, marks them, and stays within the limit (${definition.format ?? "finality"} ${definition.cloudevents?.mode ?? ""})`, () => {
      const limit = 1024 * 1024;
      const trace = { traceparent: `00-${"a".repeat(32)}-${"b".repeat(16)}-01` };
      const fitted = fitEffectMessage(definition, delivery(), "finality://a", limit, trace);
      expect(fitted.trace).toEqual(trace);
      // 511 KB result and 511 KB error: one of them must go, and one is enough.
      expect(fitted.cut).toHaveLength(1);
      expect(bytes(fitted.body) + MESSAGE_HEADROOM_BYTES).toBeLessThanOrEqual(limit);
      const parsed = JSON.parse(fitted.body);
      const job = parsed.job ?? parsed.data?.job;
      const cut = fitted.cut[0] as "result" | "error";
      expect(job[cut]).toEqual({
        truncated: true,
        reason: "message-too-large",
        bytes: bytes(JSON.stringify(OVERSIZED[cut])),
        limitBytes: limit,
        limitDepth: 64,
      });
      const kept = cut === "result" ? "error" : "result";
      expect(job[kept]).toEqual(OVERSIZED[kept]);
      expect(job.metadata).toEqual(OVERSIZED.metadata);
    });

  it("cuts result, error and then metadata as the limit shrinks", () => {
    const sizes = [500 * 1024, 200 * 1024, 40 * 1024].map((limit) =>
      fitEffectMessage({ name: "bus" }, delivery(), "finality://a", limit),
    );
    expect(sizes.map((fitted) => fitted.cut.length)).toEqual([2, 2, 3]);
    expect(sizes[2]?.cut).toContain("metadata");
    for (const [i, limit] of [500 * 1024, 200 * 1024, 40 * 1024].entries())
      expect(bytes(sizes[i]?.body ?? "") + MESSAGE_HEADROOM_BYTES).toBeLessThanOrEqual(limit);
  });

  it("refuses, naming the limit, when nothing left to cut makes the message fit", () => {
    expect(() => fitEffectMessage({ name: "bus" }, delivery(), "finality://a", 1500)).toThrow(
      /does not fit the destination's limit of 1500 bytes/,
    );
  });

  it("holds the lower of the configured and the destination's limit", () => {
    expect(messageLimit(undefined, null)).toBeNull();
    expect(messageLimit(undefined, 1000)).toBe(1000);
    expect(messageLimit(500, null)).toBe(500);
    expect(messageLimit(500, 1000)).toBe(500);
    expect(messageLimit(2000, 1000)).toBe(1000);
  });

  it("fits a url effect's POST to its maxMessageBytes (HTTP has no limit of its own), header and all", async () => {
    const sent: { headers: Record<string, string>; body: string }[] = [];
    const deliver = createHttpEffectDeliverer({
      transport: async (_url, headers, body) => {
        sent.push({ headers, body });
        return { status: 204, retryAfter: null };
      },
    });
    const url = "https://receiver.example/hook";
    const signal = new AbortController().signal;
    await deliver({ name: "bus", url }, delivery(), signal);
    await deliver({ name: "bus", url, maxMessageBytes: 256 * 1024 }, delivery(), signal);
    expect(sent[0]?.headers["finality-truncated"]).toBeUndefined();
    expect(JSON.parse(sent[0]?.body ?? "{}").job.result).toEqual(OVERSIZED.result);
    expect(sent[1]?.headers["finality-truncated"]?.split(",").sort()).toEqual(["error", "result"]);
    expect(bytes(sent[1]?.body ?? "")).toBeLessThan(256 * 1024);
  });
});
