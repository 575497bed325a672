import { CloudEvent } from "cloudevents";
import { describe, expect, it } from "vitest";
import { encodeEffectMessage, finalityBody } from "../../src/engine/effect-message.js";
import { makeJob } from "../helpers/records.js";

// The one encoding every destination sends, checked with the cloudevents SDK's own validation.

const job = makeJob({
  id: "op/1",
  provider: "acme",
  state: "running",
  settledAt: null,
  updatedAt: 1_700_000_000_000,
});
const stuck = { type: "job.stuck" as const, effect: "alert", idempotencyKey: "fin_abc", attempt: 3, job };

describe("effect messages", () => {
  it("names a stuck alert finality.job.stuck, with the job's last update as its time", () => {
    const message = encodeEffectMessage({ name: "alert", format: "cloudevents" }, stuck, "finality://a");
    const event = new CloudEvent(JSON.parse(message.body), true);
    expect(event).toMatchObject({
      type: "finality.job.stuck",
      id: "fin_abc",
      subject: "acme/op/1",
      source: "finality://a",
      time: new Date(1_700_000_000_000).toISOString(),
      finalityattempt: "3",
    });
    expect(message.attributes).toBeNull();
  });

  it("keeps the attempt out of data, so data is the same on every attempt", () => {
    const definition = {
      name: "alert",
      format: "cloudevents" as const,
      cloudevents: { mode: "binary" as const },
    };
    const first = encodeEffectMessage(definition, { ...stuck, attempt: 1 }, "finality://a");
    const later = encodeEffectMessage(definition, { ...stuck, attempt: 7 }, "finality://a");
    expect(later.body).toBe(first.body);
    expect(later.attributes?.finalityattempt).toBe("7");
    const event = new CloudEvent({
      ...later.attributes,
      datacontenttype: later.contentType,
      data: JSON.parse(later.body),
    });
    expect(event.validate()).toBe(true);
  });

  it("leaves the default format as Finality's own body", () => {
    const message = encodeEffectMessage({ name: "alert" }, stuck, "finality://a");
    expect(message).toEqual({ body: finalityBody(stuck), contentType: "application/json", attributes: null });
    expect(JSON.parse(message.body)).toMatchObject({
      type: "job.stuck",
      effect: "alert",
      idempotencyKey: "fin_abc",
      attempt: 3,
    });
  });
});
