import { connect } from "nats";
import { expect } from "vitest";
import { SECRET, signWith } from "../../http/helpers/webhooks.js";
import { eventually, json, refusal, SCALE, type StartScenario } from "../scenario.js";

/** The shared NATS server with JetStream (.ci/run starts it). */
const NATS_URL = "nats://127.0.0.1:4222";
const PROVIDER = "broker-acme";

/** Every message of `stream`: its Nats-Msg-Id (the effect's key) and the job it names. */
async function streamMessages(stream: string): Promise<{ key: string; job: string }[]> {
  const nc = await connect({ servers: NATS_URL });
  try {
    const jsm = await nc.jetstreamManager();
    const { state } = await jsm.streams.info(stream);
    const out: { key: string; job: string }[] = [];
    for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq++) {
      const message = await jsm.streams.getMessage(stream, { seq });
      const body = JSON.parse(message.string()) as { job: { id: string } };
      out.push({ key: message.header?.get("Nats-Msg-Id") ?? "", job: body.job.id });
    }
    return out;
  } finally {
    await nc.close();
  }
}

async function deleteStream(stream: string): Promise<void> {
  const nc = await connect({ servers: NATS_URL });
  try {
    await (await nc.jetstreamManager()).streams.delete(stream).catch(() => false);
  } finally {
    await nc.close();
  }
}

/**
 * Effects over one broker (NATS JetStream on 127.0.0.1:4222): each settled job's effect arrives
 * once on the subject, however many replicas raced to deliver it and however often the terminal
 * webhook came. A Worker opens no TCP socket to a broker: there the start is refused, naming the
 * effect (the refusal is the assertion).
 */
export const brokerEffects: StartScenario = {
  name: "broker-effects",
  async run(deployment) {
    const stream = `FINALITY_PARITY_${process.pid}_${deployment.name.replace(/\W/g, "")}_${Date.now()}`;
    const config = {
      providers: { [PROVIDER]: { type: "generic", webhook: { secrets: [SECRET] } } },
      effects: [{ name: "parity-bus", nats: { servers: [NATS_URL], subject: `${stream}.settled`, stream } }],
      effectDelivery: { retrySeconds: [0.2, 0.5, 1] },
      log: { level: process.env.PARITY_LOG_LEVEL ?? "error" },
    };
    if (deployment.name === "workers×4") {
      expect(await refusal(deployment, config)).toMatch(
        /effects\.0: broker destinations \(nats, amqp, redis\)/,
      );
      return;
    }
    const running = await deployment.start(config);
    try {
      const jobs = 6 * SCALE;
      const send = async (id: string, state: string, delivery: string) => {
        const body = JSON.stringify({ jobId: id, state });
        const response = await running.fetch(`/webhooks/${PROVIDER}`, {
          method: "POST",
          headers: signWith(SECRET, body, { id: delivery }),
          body,
        });
        await response.arrayBuffer();
        return response.status;
      };
      for (let i = 0; i < jobs; i++) {
        expect(await send(`job-${i}`, "running", `b-${i}-1`)).toBe(200);
        expect(await send(`job-${i}`, "succeeded", `b-${i}-2`)).toBe(200);
        // The terminal webhook again, by another delivery id (the provider's retry): no second settlement.
        expect(await send(`job-${i}`, "succeeded", `b-${i}-3`)).toBe(200);
      }
      await eventually(running, async () =>
        expect((await streamMessages(stream)).length).toBeGreaterThanOrEqual(jobs),
      );
      // Every delivery settled (none still due that could add a message later), then the stream.
      await eventually(running, async () => {
        const { body } = await json<{ items: { status: string }[] }>(
          running,
          `/v1/effects?provider=${PROVIDER}&limit=500`,
        );
        expect(body.items.map((e) => e.status)).toEqual(Array(jobs).fill("delivered"));
      });
      const messages = await streamMessages(stream);
      expect(messages.map((m) => m.job).sort()).toEqual(
        Array.from({ length: jobs }, (_, i) => `job-${i}`).sort(),
      );
      expect(new Set(messages.map((m) => m.key)).size).toBe(jobs);
    } finally {
      await running.stop();
      await deleteStream(stream);
    }
  },
};
