import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher } from "../../src/engine/dispatcher.js";
import type { Finality } from "../../src/engine/finality.js";
import { effectPayloadSchema } from "../../src/http/effect-payload-schema.js";
import { buildOpenApiDocument } from "../../src/http/openapi/openapi-document.js";
import { EffectReceiver } from "../helpers/receiver.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { SECRET } from "../http/helpers/webhooks.js";

// The `webhooks` EffectPayload of /openapi.json describes the alert an orphaned intent sends:
// a real delivery, POSTed by the dispatcher to a URL effect on loopback, parses with the
// described JSON Schema (turned back into a validator) and with the zod schema it is built from.

let dir: TempDir;
let finality: Finality;
let receiver: EffectReceiver;
// Real time: the receiver checks the signature's timestamp against its own clock.
let now = Date.now();

beforeAll(async () => {
  dir = tempDir("finality-orphan-payload-");
  receiver = new EffectReceiver(SECRET);
  await receiver.listen();
  finality = createFinality({
    store: { sqlite: dir.file("ledger.db") },
    providers: { acme: {} },
    intentTimeoutSeconds: 60,
    clock: { now: () => now },
    effects: [{ name: "orphans", url: receiver.url, secret: SECRET, on: ["orphaned"] }],
  });
});
afterAll(async () => {
  await finality?.close();
  await receiver?.close();
  dir?.cleanup();
});

/** The document's EffectPayload as a validator, its $refs resolved within the document. */
function describedPayload() {
  const document = JSON.parse(
    JSON.stringify(buildOpenApiDocument({ runs: true })).replaceAll("#/components/schemas/", "#/$defs/"),
  );
  const schemas = document.components.schemas as Record<string, object>;
  return z.fromJSONSchema({ ...schemas.EffectPayload, $defs: schemas } as never);
}

describe("the orphaned intent's alert in the OpenAPI webhooks section", () => {
  it("a real intent.orphaned delivery parses with the described EffectPayload, intent included", async () => {
    await finality.recordIntent({ provider: "acme", key: "order-9", kind: "batch", metadata: { n: 1 } });
    now += 61_000;
    // (61 s ahead: within the receiver's 5 min tolerance.)
    expect((await finality.flagOrphanedIntents()).map((i) => i.key)).toEqual(["order-9"]);
    expect(await createDispatcher(finality).runOnce()).toBe(1);
    await receiver.until(() => receiver.deliveries.length === 1);
    const body = receiver.deliveries[0]?.body as unknown;

    const described = describedPayload().safeParse(body);
    expect(described.success, described.error?.message).toBe(true);
    const payload = effectPayloadSchema.parse(body);
    expect(payload).toMatchObject({
      type: "intent.orphaned",
      effect: "orphans",
      intent: { key: "order-9", provider: "acme", status: "orphaned", kind: "batch", metadata: { n: 1 } },
    });
  });

  it("the described schema can fail: an unknown type or an intent missing its key is refused", () => {
    const described = describedPayload();
    const body = receiver.deliveries[0]?.body as Record<string, unknown>;
    expect(described.safeParse({ ...body, type: "intent.lost" }).success).toBe(false);
    const { key: _key, ...intent } = body.intent as Record<string, unknown>;
    expect(described.safeParse({ ...body, intent }).success).toBe(false);
  });
});
