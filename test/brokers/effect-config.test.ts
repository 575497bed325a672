import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { SECRET } from "../http/helpers/webhooks.js";

// The broker destinations' and CloudEvents' configuration: one destination, checked URLs, clear
// messages that name the field, and no credential in any message.

const parse = (effect: Record<string, unknown>, options = {}) =>
  parseConfig({ effects: [{ name: "e", ...effect }] }, {}, {}, options);
const errorOf = (effect: Record<string, unknown>) => {
  try {
    parse(effect);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("accepted");
};

const NATS = { servers: "nats://127.0.0.1:4222", subject: "finality.settled", stream: "FINALITY" };
const AMQP = { url: "amqp://guest:guest@127.0.0.1:5672", exchange: "", routingKey: "finality" };
const REDIS = { url: "redis://127.0.0.1:6379", stream: "finality" };

describe("broker effect configuration", () => {
  it("takes the contract's shapes as they are written in the issue", () => {
    const bus = parse({ nats: NATS }).effects[0];
    expect(bus?.nats?.servers).toEqual(["nats://127.0.0.1:4222"]);
    expect(parse({ amqp: AMQP }).effects[0]?.amqp).toEqual(AMQP);
    expect(parse({ redis: REDIS }).effects[0]?.redis).toEqual(REDIS);
    expect(
      parse({ nats: { ...NATS, servers: "nats://a:4222, nats://b:4222" } }).effects[0]?.nats?.servers,
    ).toEqual(["nats://a:4222", "nats://b:4222"]);
  });

  it.each([
    ["no destination", {}, 'effects.0: needs one destination: "url", "nats", "amqp" or "redis"'],
    ["two destinations", { nats: NATS, redis: REDIS }, 'names "nats" and "redis": an effect has exactly one'],
    ["a url without its secret", { url: "https://example.com/h" }, "effects.0.secret: is required with url"],
    [
      "a secret on a broker effect",
      { redis: REDIS, secret: SECRET },
      "effects.0.secret: applies to url effects only",
    ],
    [
      "a NATS URL of another scheme",
      { nats: { ...NATS, servers: "http://x:4222" } },
      "effects.0.nats.servers.0",
    ],
    [
      "a wildcard subject",
      { nats: { ...NATS, subject: "finality.>" } },
      "effects.0.nats.subject: must be a NATS subject",
    ],
    [
      "an AMQP URL of another scheme",
      { amqp: { ...AMQP, url: "http://guest:guest@x" } },
      "effects.0.amqp.url: must be an amqp://",
    ],
    [
      "a Redis URL of another scheme",
      { redis: { ...REDIS, url: "http://x" } },
      "effects.0.redis.url: must be a redis://",
    ],
    ["a missing routing key", { amqp: { url: AMQP.url, exchange: "" } }, "effects.0.amqp.routingKey"],
    [
      "cloudevents options without the format",
      { redis: REDIS, cloudevents: { mode: "binary" } },
      'needs format: "cloudevents"',
    ],
    [
      "a maxMessageBytes too small for a job's metadata and the rest of its message",
      { redis: REDIS, maxMessageBytes: 65_536 },
      "effects.0.maxMessageBytes",
    ],
    [
      "an unknown mode",
      { redis: REDIS, format: "cloudevents", cloudevents: { mode: "batch" } },
      "effects.0.cloudevents.mode",
    ],
  ])("refuses %s with a message naming the field", (_name, effect, message) => {
    expect(errorOf(effect)).toContain(message);
  });

  it("never shows a credential of a broker URL in an error", () => {
    const message = errorOf({ amqp: { ...AMQP, url: "amqqp://guest:hunter2@127.0.0.1" } });
    expect(message).toContain("effects.0.amqp.url");
    expect(message).not.toContain("hunter2");
  });

  it("accepts format cloudevents on any destination, and keeps the default format unset", () => {
    expect(parse({ url: "https://example.com/h", secret: SECRET }).effects[0]?.format).toBeUndefined();
    for (const destination of [{ nats: NATS }, { amqp: AMQP }, { redis: REDIS }])
      expect(parse({ ...destination, format: "cloudevents" }).effects[0]?.format).toBe("cloudevents");
  });

  it("keeps env: broker URLs valid for commands that read no secrets", () => {
    const config = parse({ amqp: { ...AMQP, url: "env:AMQP_URL" } }, { resolveSecrets: false });
    expect(config.effects[0]?.amqp?.url).toMatch(/^amqp:\/\//);
  });
});
