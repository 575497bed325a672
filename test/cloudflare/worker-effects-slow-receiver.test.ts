import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EffectReceiver } from "../helpers/receiver.js";
import { SECRET, signWith } from "../http/helpers/webhooks.js";
import { startWorkerLedger, type WorkerLedger } from "./helpers/worker-ledger.js";

// On Workers effects go out from the ledger object's alarm, and a run of the alarm used to wait for
// all of its deliveries, batch by batch: one receiver that takes `timeoutSeconds` to answer held
// every effect enqueued meanwhile until it did (the next alarm cannot start while one runs). A
// delivery that ends frees its slot for the next due effect within the same run, so a slow one
// holds only its own slot.

/** Long enough that a test waiting on the slow delivery to time out would fail by its own timeout. */
const TIMEOUT_SECONDS = 120;

describe("a slow effect receiver on Workers", () => {
  const receiver = new EffectReceiver(SECRET);
  let worker: WorkerLedger;
  beforeAll(async () => {
    await receiver.listen();
    // The job "slow" gets a receiver that does not answer until the test lets it go.
    receiver.decide = (delivery) => (delivery.body.job.id === "slow" ? "hold" : 204);
    worker = await startWorkerLedger({
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
      effects: [{ name: "notify", url: receiver.url, secret: SECRET, on: ["succeeded"] }],
      effectDelivery: { timeoutSeconds: TIMEOUT_SECONDS },
      log: { level: "error" },
    });
  }, 120_000);
  afterAll(async () => {
    for (const held of receiver.held.splice(0)) held.writeHead(204).end();
    await worker?.dispose();
    await receiver.close();
  });

  const settle = async (id: string) => {
    const body = JSON.stringify({ jobId: id, state: "succeeded", seq: 1 });
    const answer = await worker.fetch("/webhooks/acme", {
      method: "POST",
      headers: signWith(SECRET, body),
      body,
    });
    expect(answer.status).toBe(200);
    await answer.arrayBuffer();
  };
  const deliveredTo = (id: string) => [...receiver.applied.values()].some((d) => d.body.job.id === id);

  it("delivers the effects enqueued while one delivery hangs, before that one ends", async () => {
    await settle("slow");
    await receiver.until(() => receiver.held.length === 1);
    // Enqueued while the alarm's run is waiting on the slow receiver.
    const others = ["fast-0", "fast-1", "fast-2"];
    for (const id of others) await settle(id);
    await receiver.until(() => others.every(deliveredTo));
    // The slow one is still in flight: nothing waited for it to end.
    expect(receiver.held).toHaveLength(1);
    expect(deliveredTo("slow")).toBe(false);
    const held = receiver.held.splice(0);
    receiver.decide = () => 204;
    for (const response of held) response.writeHead(204).end();
  }, 30_000);
});
