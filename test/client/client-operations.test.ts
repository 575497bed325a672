import { describe, expect, it } from "vitest";
import { createFinalityClient } from "../../src/client/index.js";
import { buildOpenApiDocument } from "../../src/http/openapi/openapi-document.js";

// The client against the document: one method per operation, named by its operationId, but for
// those a program does not call through it. A route described without a client method fails here.

/**
 * Sent by providers (webhooks), scraped by Prometheus, or read by a browser; the settlement stream
 * is for `EventSource` (the client's `followSettlements` follows the same feed by long polls).
 */
const NOT_IN_CLIENT = [
  "receiveWebhook",
  "metrics",
  "openApiDocument",
  "apiReferencePage",
  "apiReferenceAsset",
  "streamSettlements",
];

/** Client methods that are no operation of their own, each built on the one it names. */
const HELPERS: Record<string, string> = {
  followSettlements: "listSettlements",
  settlements: "listSettlements",
  waitForJob: "getJob",
};

function operationIds(): string[] {
  const document = buildOpenApiDocument({ runs: true }) as {
    paths: Record<string, Record<string, { operationId: string }>>;
  };
  return Object.values(document.paths).flatMap((methods) =>
    Object.values(methods).map((op) => op.operationId),
  );
}

describe("finality/client and /openapi.json", () => {
  it("has one method per operation, named by its operationId", () => {
    const client = createFinalityClient({ baseUrl: "http://127.0.0.1:1" });
    const operations = operationIds();
    const expected = operations.filter((id) => !NOT_IN_CLIENT.includes(id));
    expect(expected.length).toBeGreaterThan(15);
    expect(Object.values(HELPERS).filter((id) => !expected.includes(id))).toEqual([]);
    expect(Object.keys(client).sort()).toEqual([...expected, ...Object.keys(HELPERS)].sort());
  });
});
