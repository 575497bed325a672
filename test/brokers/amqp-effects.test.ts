import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { promisify } from "node:util";
import { connect } from "amqplib";
import { type CloudEvent, HTTP } from "cloudevents";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAmqpEffectTarget } from "../../src/engine/brokers/amqp-effect-target.js";
import { DeliveryError } from "../../src/engine/delivery-error.js";
import type { EffectDefinition } from "../../src/engine/effect-definitions.js";
import type { EffectTarget } from "../../src/engine/effect-target.js";
import { engineOf } from "../helpers/engine.js";
import { requireServer } from "../helpers/services.js";
import { brokerRun, OVERSIZED } from "./broker-harness.js";

// Against the machine's RabbitMQ (127.0.0.1:5672, guest/guest), with queues of unique names. Every
// RabbitMQ test lives in this file: it restarts the broker's app (stop_app / start_app), which no
// other test file may see. Connections are cut server-side with `rabbitmqctl close_connection`,
// found by the connection_name client property the target sets.

const URL = "amqp://guest:guest@127.0.0.1:5672";
const run_ = promisify(execFile);
const rabbitmqctl = (...args: string[]) => run_("rabbitmqctl", args, { timeout: 120_000 });
const queues: string[] = [];

beforeAll(() => requireServer("RabbitMQ", URL, 5672));

afterAll(async () => {
  const connection = await connect(URL);
  const channel = await connection.createChannel();
  for (const queue of queues) await channel.deleteQueue(queue).catch(() => {});
  await connection.close();
});

function amqpEffect(extra: Partial<EffectDefinition> = {}): EffectDefinition {
  const queue = `finality-test-${randomUUID()}`;
  queues.push(queue);
  return {
    name: `q-${queue.slice(-8)}`,
    amqp: { url: URL, exchange: "", routingKey: queue, queue },
    ...extra,
  };
}

/** Takes every message in a queue (a connection of the test's own). */
async function drain(queue: string) {
  const connection = await connect(URL);
  try {
    const channel = await connection.createChannel();
    const out: { id: string; contentType: string; headers: Record<string, unknown>; body: string }[] = [];
    for (;;) {
      const message = await channel.get(queue, { noAck: true });
      if (message === false) return out;
      out.push({
        id: String(message.properties.messageId),
        contentType: String(message.properties.contentType),
        headers: message.properties.headers ?? {},
        body: message.content.toString(),
      });
    }
  } finally {
    await connection.close();
  }
}

/** Closes, server-side, the connection the target opened for `effect`. */
async function closeConnectionOf(effect: string): Promise<void> {
  // Tab-separated lines `<rabbit@host.1.2.3>\t[{...}]`: the pid as close_connection takes it.
  const { stdout } = await rabbitmqctl("list_connections", "-q", "pid", "client_properties");
  const ours = stdout.split("\n").filter((line) => line.includes(`finality effect ${effect}`));
  expect(ours.length).toBe(1);
  for (const line of ours) await rabbitmqctl("close_connection", line.split("\t")[0] ?? "", "cut by test");
}

describe("RabbitMQ effects", () => {
  it("delivers once per key when the connection is closed server-side mid-run", async () => {
    const definition = amqpEffect();
    const run = brokerRun(definition, createAmqpEffectTarget({ minBackoffMs: 20, maxBackoffMs: 200 }));
    try {
      await run.settle("a", 20);
      await run.delivered(5);
      await closeConnectionOf(definition.name);
      await run.settle("b", 20);
      await run.delivered(40);
      // A publish in flight at the cut may be queued with its confirm lost, and its retry queued
      // too: RabbitMQ does not dedupe, the consumer does on message_id. No key may be missing.
      const messages = await drain(definition.amqp?.queue ?? "");
      expect([...new Set(messages.map((m) => m.id))].sort()).toEqual(await run.keys());
      expect(JSON.parse(messages[0]?.body ?? "{}")).toMatchObject({ type: "job.settled" });
    } finally {
      await run.close();
    }
  }, 180_000);

  it("delivers once per key when the broker restarts mid-run (stop_app, start_app)", async () => {
    const definition = amqpEffect();
    const run = brokerRun(definition, createAmqpEffectTarget({ minBackoffMs: 20, maxBackoffMs: 500 }));
    try {
      await run.settle("a", 20);
      await run.delivered(5);
      await rabbitmqctl("stop_app");
      try {
        // Intake goes on while the broker is down.
        await run.settle("b", 20);
        await run.failures(1);
      } finally {
        await rabbitmqctl("start_app");
        await rabbitmqctl("await_startup");
      }
      await run.delivered(40);
      // A confirm lost with the broker leaves a retry the queue may hold twice: RabbitMQ does not
      // dedupe, the consumer does on message_id. Every key arrives; none is missing.
      const messages = await drain(definition.amqp?.queue ?? "");
      expect([...new Set(messages.map((m) => m.id))].sort()).toEqual(await run.keys());
    } finally {
      await run.close();
    }
  }, 300_000);

  it("a retry after a lost confirm carries the same message_id, so the consumer dedupes it", async () => {
    const definition = amqpEffect();
    const amqp = createAmqpEffectTarget();
    const losing: EffectTarget = {
      kind: "amqp",
      async deliver(d, delivery, signal) {
        await amqp.deliver(d, delivery, signal);
        if (delivery.attempt === 1) throw new DeliveryError("confirm lost");
      },
      close: () => amqp.close?.() ?? Promise.resolve(),
    };
    const run = brokerRun(definition, losing);
    try {
      await run.settle("lost", 3);
      await run.delivered(3);
      const messages = await drain(definition.amqp?.queue ?? "");
      expect(messages).toHaveLength(6);
      expect([...new Set(messages.map((m) => m.id))].sort()).toEqual(await run.keys());
    } finally {
      await run.close();
    }
  }, 60_000);

  it("counts an unroutable message as a failure, not a delivery", async () => {
    const definition: EffectDefinition = {
      name: "nowhere",
      amqp: { url: URL, exchange: "", routingKey: `finality-absent-${randomUUID()}` },
    };
    const run = brokerRun(definition, createAmqpEffectTarget());
    try {
      await run.settle("lost", 1);
      await run.failures(1);
      const [effect] = (await engineOf(run.finality).store.listEffects({})).items;
      expect(effect?.lastError).toContain("message returned");
      expect(effect?.lastError).not.toContain("guest:guest");
    } finally {
      await run.close();
    }
  }, 60_000);

  it("carries CloudEvents the cloudevents SDK parses, structured and binary (cloudEvents_ headers)", async () => {
    for (const mode of ["structured", "binary"] as const) {
      const definition = amqpEffect({
        format: "cloudevents",
        cloudevents: { mode, source: "finality://test" },
      });
      const run = brokerRun(definition, createAmqpEffectTarget());
      try {
        await run.settle(`ce-${mode}`, 1);
        await run.delivered(1);
        const [message] = await drain(definition.amqp?.queue ?? "");
        if (!message) throw new Error("no message");
        const headers: Record<string, string> = { "content-type": message.contentType };
        for (const [name, value] of Object.entries(message.headers))
          if (name.startsWith("cloudEvents_"))
            headers[`ce-${name.slice("cloudEvents_".length)}`] = String(value);
        const event = HTTP.toEvent({ headers, body: message.body }) as CloudEvent<{ job: { id: string } }>;
        expect(event.validate()).toBe(true);
        expect(event).toMatchObject({
          id: message.id,
          type: "finality.job.succeeded",
          subject: `acme/ce-${mode}-0`,
        });
        expect(event.data?.job.id).toBe(`ce-${mode}-0`);
      } finally {
        await run.close();
      }
    }
  }, 60_000);

  it("delivers a job at the ledger's limits whole under RabbitMQ's default max_message_size", async () => {
    const definition = amqpEffect();
    const run = brokerRun(definition, createAmqpEffectTarget());
    try {
      await run.settleOversized("whole");
      expect((await run.firstOutcome()).outcome).toBe("delivered");
      const [message] = await drain(definition.amqp?.queue ?? "");
      expect(message?.headers["finality-truncated"]).toBeUndefined();
      expect(JSON.parse(message?.body ?? "{}").job).toMatchObject({ ...OVERSIZED });
    } finally {
      await run.close();
    }
  }, 60_000);

  it("fits the message to the effect's maxMessageBytes (RabbitMQ does not announce its limit), cut and marked", async () => {
    const limit = 512 * 1024;
    const definition = amqpEffect({ maxMessageBytes: limit });
    const run = brokerRun(definition, createAmqpEffectTarget());
    try {
      await run.settleOversized("big");
      const first = await run.firstOutcome();
      expect(first.error).toBeUndefined();
      expect(first.outcome).toBe("delivered");
      const [message] = await drain(definition.amqp?.queue ?? "");
      if (!message) throw new Error("no message");
      expect(new TextEncoder().encode(message.body).length).toBeLessThan(limit);
      expect(String(message.headers["finality-truncated"]).split(",").sort()).toEqual(["error", "result"]);
      const { job } = JSON.parse(message.body);
      for (const field of ["result", "error"] as const)
        expect(job[field]).toMatchObject({ truncated: true, reason: "message-too-large", limitBytes: limit });
      expect(job.metadata).toEqual(OVERSIZED.metadata);
    } finally {
      await run.close();
    }
  }, 60_000);
});
