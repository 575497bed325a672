import { describe, expect, it } from "vitest";
import { headersTimeoutOf } from "../../src/config/config-schema.js";
import { parseConfig } from "../../src/config/load-config.js";

// The HTTP edge's keys: defaults, environment overrides, and the combinations refused because
// the server could not keep its promise under them (the message names the keys).

const parse = (server: Record<string, unknown>, env: Record<string, string> = {}) =>
  parseConfig({ server }, env, { db: ":memory:" });

describe("server keys of the HTTP edge", () => {
  it("default above common proxy idle timeouts, the headers timeout above the keep-alive one", () => {
    const { server } = parse({});
    expect(server.keepAliveTimeoutMs).toBe(65_000);
    expect(headersTimeoutOf(server)).toBe(66_000);
    expect(server.bodyBytesInFlight).toBe(64 * 1024 * 1024);
    expect(headersTimeoutOf(parse({ keepAliveTimeoutMs: 120_000 }).server)).toBe(121_000);
    expect(parseConfig({}, {}, { db: ":memory:" }).telemetry.trustIncomingTraceparent).toBe(false);
  });

  it("take their environment variables", () => {
    const { server } = parse(
      {},
      {
        FINALITY_KEEP_ALIVE_TIMEOUT_MS: "90000",
        FINALITY_HEADERS_TIMEOUT_MS: "95000",
        FINALITY_BODY_BYTES_IN_FLIGHT: "8388608",
      },
    );
    expect(server).toMatchObject({
      keepAliveTimeoutMs: 90_000,
      headersTimeoutMs: 95_000,
      bodyBytesInFlight: 8_388_608,
    });
  });

  it.each([
    [
      { keepAliveTimeoutMs: 70_000, headersTimeoutMs: 70_000 },
      "server.headersTimeoutMs: must be above server.keepAliveTimeoutMs (70000)",
    ],
    [
      { bodyLimitBytes: 2_000_000, bodyBytesInFlight: 1_000_000 },
      "server.bodyBytesInFlight: must be at least server.bodyLimitBytes (2000000)",
    ],
  ])("refuse %j naming the keys", (server, message) => {
    expect(() => parse(server)).toThrow(message);
  });
});
