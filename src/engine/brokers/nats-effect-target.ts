import { connect, headers, type JetStreamClient, type NatsConnection, nanos, StorageType } from "nats";
import { prefixedAttributes } from "../effect-message.js";
import type { EffectTarget } from "../effect-target.js";
import { truncatedHeader } from "../message-fit.js";
import { type BrokerTargetOptions, createBrokerTarget } from "./broker-target.js";

// NATS JetStream. Each message carries `Nats-Msg-Id` = the idempotency key, so a retry within the
// stream's duplicate window is dropped by the server (the ack says `duplicate`), and delivered
// means the publish ack came back: the message is stored in the stream. The client's own
// reconnect is off: a connection that closes is dropped and the next delivery opens another
// (ConnectionKeeper), so an outage is one error path, not two.

interface NatsConnectionAndStream {
  nc: NatsConnection;
  js: JetStreamClient;
}

/** How long a publish waits for its ack; the dispatcher's own timeout stops it sooner if shorter. */
const PUBLISH_TIMEOUT_MS = 10_000;

/** nats-server's default `max_payload`, for a server whose INFO said none. */
const DEFAULT_MAX_PAYLOAD = 1024 * 1024;

export function createNatsEffectTarget(options: BrokerTargetOptions = {}): EffectTarget {
  return createBrokerTarget<NatsConnectionAndStream, "nats">(
    {
      kind: "nats",
      async open(nats, definition, broke) {
        const nc = await connect({
          servers: [...nats.servers],
          name: `finality effect ${definition.name}`,
          reconnect: false,
          timeout: 5000,
        });
        void nc.closed().then((error) => broke(error ?? new Error("connection closed")));
        try {
          await ensureStream(nc, nats.stream, nats.subject, nats.duplicateWindowSeconds);
        } catch (error) {
          await nc.close().catch(() => {});
          throw error;
        }
        return { nc, js: nc.jetstream() };
      },
      close: ({ nc }) => nc.close(),
      // The server announces its `max_payload` (headers and payload together) in INFO: a larger
      // publish is refused (MAX_PAYLOAD_EXCEEDED) however often it is retried.
      limitBytes: ({ nc }) => nc.info?.max_payload ?? DEFAULT_MAX_PAYLOAD,
      async publish({ js }, nats, message, delivery) {
        const h = headers();
        h.set("content-type", message.contentType);
        h.set("finality-attempt", String(delivery.attempt));
        const truncated = truncatedHeader(message);
        if (truncated !== null) h.set("finality-truncated", truncated);
        // CloudEvents NATS binding, binary mode: the attributes as `ce-` headers.
        for (const [name, value] of Object.entries(prefixedAttributes(message, "ce-"))) h.set(name, value);
        for (const [name, value] of Object.entries(message.trace ?? {})) h.set(name, value);
        await js.publish(nats.subject, new TextEncoder().encode(message.body), {
          msgID: delivery.idempotencyKey,
          expect: { streamName: nats.stream },
          headers: h,
          timeout: PUBLISH_TIMEOUT_MS,
        });
      },
    },
    options,
  );
}

/**
 * The stream must exist before the first publish (a publish to a subject no stream captures gets
 * no ack). A missing one is created with file storage, capturing `subject` only; an existing one
 * is used as it is (its subjects and duplicate window are the operator's).
 */
async function ensureStream(
  nc: NatsConnection,
  stream: string,
  subject: string,
  duplicateWindowSeconds: number | undefined,
): Promise<void> {
  const jsm = await nc.jetstreamManager();
  try {
    await jsm.streams.info(stream);
    return;
  } catch (error) {
    if (!/not found/i.test(String((error as Error).message))) throw error;
  }
  await jsm.streams.add({
    name: stream,
    subjects: [subject],
    storage: StorageType.File,
    ...(duplicateWindowSeconds ? { duplicate_window: nanos(duplicateWindowSeconds * 1000) } : {}),
  });
}
