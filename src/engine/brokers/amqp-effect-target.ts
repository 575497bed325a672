import { type ChannelModel, type ConfirmChannel, connect, type Message } from "amqplib";
import { redactToOrigin } from "../../core/url-redaction.js";
import { DeliveryError } from "../delivery-error.js";
import { prefixedAttributes } from "../effect-message.js";
import type { EffectTarget } from "../effect-target.js";
import { truncatedHeader } from "../message-fit.js";
import { type BrokerTargetOptions, createBrokerTarget } from "./broker-target.js";

// RabbitMQ (AMQP 0-9-1). A confirm channel: delivered means the broker confirmed the message,
// which for a persistent message on a durable queue means it is written to disk. `message_id`
// is the idempotency key (RabbitMQ does not dedupe by itself: the consumer does, on that id).
// Published `mandatory`, so a message no queue takes comes back (basic.return, before its
// confirm) and counts as a failure instead of vanishing with a confirm.

/**
 * RabbitMQ's `max_message_size` by default since 4.0 (128 MiB before): the server refuses a larger
 * body and closes the channel. It is not announced to clients, so an operator who set it lower
 * says so with the effect's `maxMessageBytes`.
 */
const DEFAULT_MAX_MESSAGE_SIZE = 16 * 1024 * 1024;

interface AmqpConnection {
  connection: ChannelModel;
  channel: ConfirmChannel;
  /** Keys of messages the broker returned as unroutable, until their confirm arrives. */
  returned: Set<string>;
}

export function createAmqpEffectTarget(options: BrokerTargetOptions = {}): EffectTarget {
  return createBrokerTarget<AmqpConnection, "amqp">(
    {
      kind: "amqp",
      async open(amqp, definition, broke) {
        const connection = await connect(amqp.url, {
          // Names the connection in `rabbitmqctl list_connections client_properties`.
          clientProperties: { connection_name: `finality effect ${definition.name}` },
          timeout: 5000,
        });
        connection.on("error", () => {}); // "close" follows; an unheard "error" would end the process.
        connection.on("close", (error?: unknown) => broke(error));
        try {
          const channel = await connection.createConfirmChannel();
          channel.on("error", () => {});
          channel.on("close", () => broke(new Error("channel closed")));
          const returned = new Set<string>();
          channel.on("return", (message: Message) => {
            const id = message.properties.messageId;
            if (typeof id === "string") returned.add(id);
          });
          if (amqp.queue) {
            await channel.assertQueue(amqp.queue, { durable: true });
            if (amqp.exchange !== "") await channel.bindQueue(amqp.queue, amqp.exchange, amqp.routingKey);
          }
          return { connection, channel, returned };
        } catch (error) {
          await connection.close().catch(() => {});
          throw error;
        }
      },
      close: ({ connection }) => connection.close(),
      limitBytes: () => DEFAULT_MAX_MESSAGE_SIZE,
      publish({ channel, returned }, amqp, message, delivery) {
        const key = delivery.idempotencyKey;
        const truncated = truncatedHeader(message);
        return new Promise<void>((resolve, reject) => {
          channel.publish(
            amqp.exchange,
            amqp.routingKey,
            Buffer.from(message.body),
            {
              persistent: true,
              mandatory: true,
              messageId: key,
              contentType: message.contentType,
              // CloudEvents AMQP binding, binary mode: attributes as `cloudEvents_` properties.
              headers: {
                "finality-attempt": delivery.attempt,
                ...(truncated !== null ? { "finality-truncated": truncated } : {}),
                ...prefixedAttributes(message, "cloudEvents_"),
                ...message.trace,
              },
            },
            (error: unknown) => {
              const wasReturned = returned.delete(key);
              if (error)
                reject(new DeliveryError(`amqp ${redactToOrigin(amqp.url)} refused the message (nack)`));
              else if (wasReturned)
                reject(
                  new DeliveryError(
                    `amqp ${redactToOrigin(amqp.url)}: no queue is bound to exchange "${amqp.exchange}" with routing key "${amqp.routingKey}" (message returned)`,
                  ),
                );
              else resolve();
            },
          );
        });
      },
    },
    options,
  );
}
