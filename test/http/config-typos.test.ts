import { describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/parse-config.js";

// A configuration error names its cause, not a consequence of it (issue 30): a misspelt key also
// leaves the right one missing, and a store variant's own mistake hides behind the union's
// "one of two shapes".

const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const messageOf = (raw: unknown, env: Record<string, string> = {}): string => {
  try {
    parseConfig(raw, env);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error("parsed");
};

describe("configuration errors name the cause", () => {
  it.each([
    [
      "a misspelt required key",
      { providers: { acme: { type: "generic", webhook: { secret: SECRET } } } },
      {},
      'config error: providers.acme.webhook.secret: unknown field (did you mean "secrets"?)',
    ],
    [
      "a misspelt key beside a missing one elsewhere",
      { server: { prot: 80 }, providers: { acme: { type: "generic", webhook: {} } } },
      {},
      'config error: server.prot: unknown field (did you mean "port"?)',
    ],
    [
      "FINALITY_SQLITE_SYNCHRONOUS=fast",
      {},
      { FINALITY_SQLITE_SYNCHRONOUS: "fast" },
      "config error: FINALITY_SQLITE_SYNCHRONOUS (store.synchronous): must be FULL or NORMAL",
    ],
    [
      "a SQLite store's bad synchronous in the file",
      { store: { sqlite: "x.db", synchronous: "OFF" } },
      {},
      "config error: store.synchronous: must be FULL or NORMAL",
    ],
    [
      "a PostgreSQL store's bad URL",
      { store: { postgres: "http://db" } },
      {},
      "config error: store.postgres: must be a postgres:// URL",
    ],
    [
      "a store of neither shape",
      { store: { mysql: "x" } },
      {},
      'config error: store: expected {"sqlite": path} or {"postgres": url}',
    ],
  ])("%s", (_, raw, env, message) => {
    expect(messageOf(raw, env)).toBe(message);
  });
});
