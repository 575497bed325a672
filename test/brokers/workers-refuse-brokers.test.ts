import { afterAll, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";
import { workersLedgerFromConfig } from "../../src/host/workers/ledger-from-config.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { tempDir } from "../helpers/temp-dir.js";
import { SECRET } from "../http/helpers/webhooks.js";

// A Worker opens no TCP connection to a broker: a broker effect is refused when the Workers host
// is built, with the field named, instead of being retried until it is dead.

const dir = tempDir("finality-workers-brokers-");
afterAll(() => dir.cleanup());

describe("the Workers host and broker effects", () => {
  it("refuses a broker destination at start, naming the effect", async () => {
    const config = parseConfig(
      {
        server: { apiToken: "wiring-api-token-0123456789" },
        providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
        effects: [
          { name: "notify", url: "http://127.0.0.1:9/effects", secret: SECRET },
          { name: "s", redis: { url: "redis://:hunter2@127.0.0.1:6379", stream: "finality" } },
        ],
      },
      {},
    );
    const store = createSqliteStore({ path: dir.file("ledger.db") });
    try {
      expect(() => workersLedgerFromConfig(config, store, () => {})).toThrow(
        /effects\.1: broker destinations \(nats, amqp, redis\) need `finality serve`/,
      );
    } finally {
      await store.close();
    }
  });
});
