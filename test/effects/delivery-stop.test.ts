import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher, type DeliveryAttempt } from "../../src/engine/dispatcher.js";
import type { Finality } from "../../src/engine/finality.js";
import { createHttpEffectDeliverer } from "../../src/engine/http-effect-target.js";
import { createNodeHttpTransport } from "../../src/engine/node-http-transport.js";
import { countAbortControllers } from "../helpers/abort-controllers.js";
import { tempDir } from "../helpers/temp-dir.js";

// A url effect delivered by the dispatcher through the Node transport is stopped through the
// lease's DeliveryStop: no AbortController is made for it (one and its listeners cost a delivery
// ~18,000 instructions, and outlived it in the heap). A deliverer of the user's own still gets a
// real AbortSignal.

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

let receiver: Server;
let url = "";
const received: string[] = [];
beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      received.push(String(req.headers["webhook-id"]));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/in`;
});
afterAll(async () => {
  receiver.closeAllConnections();
  await new Promise((resolve) => receiver.close(resolve));
});

async function settledLedger(): Promise<Finality> {
  const dir = tempDir();
  const finality = createFinality({
    store: { sqlite: dir.file("ledger.db") },
    effects: [{ name: "notify", url, on: ["succeeded"] }],
  });
  cleanups.push(
    () => dir.cleanup(),
    () => finality.close(),
  );
  for (const id of ["j1", "j2", "j3"])
    await finality.ingest({ provider: "acme", id, state: "succeeded", source: "webhook", deliveryId: id });
  return finality;
}

describe("the stop of a url delivery", () => {
  it("through the Node transport: every effect delivered, and no AbortController made", async () => {
    const finality = await settledLedger();
    const attempts: DeliveryAttempt[] = [];
    const dispatcher = createDispatcher(finality, {
      deliverUrl: createHttpEffectDeliverer({ transport: createNodeHttpTransport() }),
      onAttempt: (attempt) => attempts.push(attempt),
    });
    const made = countAbortControllers();
    try {
      expect(await dispatcher.runOnce()).toBe(3);
    } finally {
      made.restore();
    }
    expect(attempts.map((a) => a.outcome)).toEqual(["delivered", "delivered", "delivered"]);
    expect(made()).toBe(0);
  });

  it("a deliverUrl of the user's own is given an AbortSignal, not yet aborted", async () => {
    const finality = await settledLedger();
    const given: unknown[] = [];
    const delivered = await createDispatcher(finality, {
      deliverUrl: async (_definition, _delivery, signal) => {
        given.push(signal);
        expect(signal.aborted).toBe(false);
      },
    }).runOnce();
    expect(delivered).toBe(3);
    expect(given).toHaveLength(3);
    for (const signal of given) expect(signal).toBeInstanceOf(AbortSignal);
  });
});
