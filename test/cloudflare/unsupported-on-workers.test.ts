import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import {
  refuseUnsupportedOnWorkers,
  unsupportedOnWorkers,
} from "../../src/host/workers/unsupported-on-workers.js";
import { SECRET } from "../http/helpers/webhooks.js";

// What a Worker cannot offer is refused at start with every key named, never silently ignored.

const base = {
  server: { apiToken: "wiring-api-token-0123456789" },
  providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
};

describe("the keys a Worker refuses", () => {
  it("names each one: a broker effect, a PostgreSQL store, an OTLP endpoint", () => {
    const config = parseConfig(
      {
        ...base,
        store: { postgres: "postgres://127.0.0.1:5432/test" },
        telemetry: { otlpUrl: "http://127.0.0.1:4318/v1/traces" },
        effects: [
          { name: "notify", url: "http://127.0.0.1:9/effects", secret: SECRET },
          { name: "bus", redis: { url: "redis://127.0.0.1:6379", stream: "finality" } },
        ],
      },
      {},
    );
    expect(unsupportedOnWorkers(config).map((u) => u.field)).toEqual([
      "effects.1",
      "store.postgres",
      "telemetry.otlpUrl",
    ]);
    let refusal: unknown;
    try {
      refuseUnsupportedOnWorkers(config);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toMatchObject({ code: "invalid-config", details: { field: "effects.1" } });
    for (const key of ["effects.1:", "store.postgres:", "telemetry.otlpUrl:"])
      expect((refusal as Error).message).toContain(key);
  });

  it("names a SQLite page cache size: a Durable Object's SQLite is not ours to size", () => {
    const config = parseConfig({ ...base, store: { sqlite: "./finality.db", cacheMiB: 8 } }, {});
    expect(unsupportedOnWorkers(config).map((u) => u.field)).toEqual(["store.cacheMiB"]);
  });

  it("takes what a Worker does offer: url effects, CloudEvents, the default store", () => {
    const config = parseConfig(
      {
        ...base,
        effects: [
          { name: "notify", url: "http://127.0.0.1:9/effects", secret: SECRET, format: "cloudevents" },
        ],
      },
      {},
    );
    expect(unsupportedOnWorkers(config)).toEqual([]);
    expect(() => refuseUnsupportedOnWorkers(config)).not.toThrow();
  });
});
