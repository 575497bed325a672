import { type CloudEvent, HTTP } from "cloudevents";
import { connect, type NatsConnection } from "nats";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createNatsEffectTarget } from "../../src/engine/brokers/nats-effect-target.js";
import { DeliveryError } from "../../src/engine/delivery-error.js";
import type { EffectDefinition } from "../../src/engine/effect-definitions.js";
import type { EffectTarget } from "../../src/engine/effect-target.js";
import { type BrokerServer, startNatsServer } from "../helpers/broker-servers.js";
import { engineOf } from "../helpers/engine.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";
import { brokerRun, OVERSIZED } from "./broker-harness.js";

// Against a private nats-server -js (its own port and store), so it can be SIGKILLed mid-run.

let server: BrokerServer;
let store: TempDir;
let inspector: NatsConnection | null = null;
let streams = 0;

beforeAll(async () => {
  store = tempDir("finality-nats-");
  server = await startNatsServer(store.path);
}, 60_000);
afterAll(async () => {
  await inspector?.close();
  await server?.kill();
  store?.cleanup();
});

function natsEffect(extra: Partial<EffectDefinition> = {}): EffectDefinition {
  streams += 1;
  return {
    name: "bus",
    nats: { servers: [server.url], subject: `finality.settled.t${streams}`, stream: `FINALITY_T${streams}` },
    ...extra,
  };
}

/** Every message in a stream, with its Nats-Msg-Id, read by a connection of the test's own. */
async function streamMessages(stream: string) {
  inspector ??= await connect({ servers: server.url });
  const jsm = await inspector.jetstreamManager();
  const { state } = await jsm.streams.info(stream);
  const out: { id: string; headers: Record<string, string>; body: string }[] = [];
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
    const message = await jsm.streams.getMessage(stream, { seq });
    const headers: Record<string, string> = {};
    for (const [name, values] of message.header ?? []) headers[name.toLowerCase()] = values.join(",");
    out.push({ id: message.header?.get("Nats-Msg-Id") ?? "", headers, body: message.string() });
  }
  return out;
}

async function reconnectInspector(): Promise<void> {
  await inspector?.close().catch(() => {});
  inspector = null;
}

describe("NATS JetStream effects", () => {
  it("delivers every settled job once per key across a SIGKILL and restart of the server mid-run", async () => {
    const definition = natsEffect();
    const run = brokerRun(definition, createNatsEffectTarget({ minBackoffMs: 20, maxBackoffMs: 200 }));
    try {
      await run.settle("a", 30);
      await run.delivered(10);
      await server.kill("SIGKILL");
      await reconnectInspector();
      // Intake does not wait on the broker: these commit while it is down.
      await run.settle("b", 30);
      await run.failures(1);
      await server.start();
      await run.delivered(60);
      const messages = await streamMessages(definition.nats?.stream ?? "");
      expect(messages.map((m) => m.id).sort()).toEqual(await run.keys());
      const body = JSON.parse(messages[0]?.body ?? "{}");
      expect(body).toMatchObject({ type: "job.settled", effect: "bus", job: { provider: "acme" } });
      expect(body.idempotencyKey).toBe(messages[0]?.id);
    } finally {
      await run.close();
    }
  }, 120_000);

  it("dedupes a publish retried after its ack was lost (the server keeps one message)", async () => {
    const definition = natsEffect();
    const nats = createNatsEffectTarget();
    let lost = 0;
    // The publish reaches the stream; the ack is lost on the way back, so the outbox retries.
    const losingAcks: EffectTarget = {
      kind: "nats",
      async deliver(d, delivery, signal) {
        await nats.deliver(d, delivery, signal);
        if (delivery.attempt === 1) {
          lost += 1;
          throw new DeliveryError("publish ack lost");
        }
      },
      close: () => nats.close?.() ?? Promise.resolve(),
    };
    const run = brokerRun(definition, losingAcks);
    try {
      await run.settle("lost", 5);
      await run.delivered(5);
      expect(lost).toBe(5);
      const messages = await streamMessages(definition.nats?.stream ?? "");
      expect(messages.map((m) => m.id).sort()).toEqual(await run.keys());
    } finally {
      await run.close();
    }
  }, 60_000);

  it("publishes CloudEvents that the cloudevents SDK parses, structured and binary (ce- headers)", async () => {
    for (const mode of ["structured", "binary"] as const) {
      const definition = natsEffect({
        format: "cloudevents",
        cloudevents: { mode, source: "finality://test" },
      });
      const run = brokerRun(definition, createNatsEffectTarget());
      try {
        await run.settle(`ce-${mode}`, 1);
        await run.delivered(1);
        const [message] = await streamMessages(definition.nats?.stream ?? "");
        if (!message) throw new Error("no message");
        const event = HTTP.toEvent({ headers: message.headers, body: message.body }) as CloudEvent<{
          effect: string;
          job: { id: string };
        }>;
        expect(event.validate()).toBe(true);
        expect(event).toMatchObject({
          specversion: "1.0",
          id: message.id,
          source: "finality://test",
          type: "finality.job.succeeded",
          subject: `acme/ce-${mode}-0`,
        });
        expect(event.data?.job.id).toBe(`ce-${mode}-0`);
        if (mode === "binary") expect(message.headers["ce-id"]).toBe(message.id);
      } finally {
        await run.close();
      }
    }
  }, 60_000);

  it("delivers a job at the ledger's limits within the server's max_payload, its result or error cut and marked", async () => {
    // ~1.1 MB encoded against nats-server's default max_payload of 1 MB: this was refused
    // (MAX_PAYLOAD_EXCEEDED) on every retry until the effect aged out and was marked dead.
    const definition = natsEffect();
    const run = brokerRun(definition, createNatsEffectTarget());
    try {
      await run.settleOversized("big");
      const first = await run.firstOutcome();
      expect(first.error).toBeUndefined();
      expect(first.outcome).toBe("delivered");
      inspector ??= await connect({ servers: server.url });
      const maxPayload = inspector.info?.max_payload ?? 0;
      expect(maxPayload).toBe(1024 * 1024);
      const [message] = await streamMessages(definition.nats?.stream ?? "");
      if (!message) throw new Error("no message");
      expect(new TextEncoder().encode(message.body).length).toBeLessThan(maxPayload);
      const { job } = JSON.parse(message.body);
      const cut = message.headers["finality-truncated"]?.split(",") ?? [];
      expect(cut).toHaveLength(1);
      for (const field of ["result", "error"] as const)
        if (cut.includes(field))
          expect(job[field]).toMatchObject({
            truncated: true,
            reason: "message-too-large",
            limitBytes: maxPayload,
          });
        else expect(job[field]).toEqual(OVERSIZED[field]);
      expect(job.metadata).toEqual(OVERSIZED.metadata);
      // The ledger keeps the whole values: the marker is the message's only.
      const stored = await run.finality.getJob({ provider: "acme", id: "big" });
      expect(stored?.result).toEqual(OVERSIZED.result);
      expect(stored?.error).toEqual(OVERSIZED.error);
    } finally {
      await run.close();
    }
  }, 60_000);

  it("reports a server that is down as a clear, retried failure without credentials", async () => {
    const definition: EffectDefinition = {
      name: "bus",
      nats: { servers: ["nats://user:hunter2@127.0.0.1:1"], subject: "finality.x", stream: "X" },
    };
    const run = brokerRun(definition, createNatsEffectTarget());
    try {
      await run.settle("down", 1);
      await run.failures(1);
      const [effect] = (await engineOf(run.finality).store.listEffects({})).items;
      expect(effect?.status).toBe("pending");
      expect(effect?.lastError).toContain("nats nats://127.0.0.1:1 is unreachable");
      expect(effect?.lastError).not.toContain("hunter2");
    } finally {
      await run.close();
    }
  }, 60_000);
});
