import { redactToOrigin, redactUrlsIn } from "../../core/url-redaction.js";
import { DeliveryError } from "../delivery-error.js";
import type { EffectDefinition, EffectDelivery } from "../effect-definitions.js";
import { DEFAULT_CLOUDEVENTS_SOURCE, type EffectMessage } from "../effect-message.js";
import {
  type BrokerKind,
  type DestinationStatus,
  destinationOf,
  destinationUrls,
  type EffectTarget,
} from "../effect-target.js";
import { fitEffectMessage, messageLimit } from "../message-fit.js";
import { effectPropagationHeaders } from "../tracing.js";
import { type ConnectionKeeper, keepConnection } from "./connection-keeper.js";

// What the three broker targets share: one kept connection per effect, the message encoded once
// for every destination, status for /readyz, and credentials kept out of every error. Each broker
// file (nats-, amqp-, redis-effect-target.ts) says only how to connect and how to publish.

/** An effect's destination on broker `K`: its `nats`, `amqp` or `redis` part. */
type BrokerDestination<K extends BrokerKind> = NonNullable<EffectDefinition[K]>;

interface BrokerClient<C, K extends BrokerKind> {
  kind: K;
  /** Opens a connection for an effect; calls `broke` when the client sees it closed. */
  open(
    destination: BrokerDestination<K>,
    definition: EffectDefinition,
    broke: (reason?: unknown) => void,
  ): Promise<C>;
  close(connection: C): Promise<void>;
  /**
   * The largest message (body and headers) this connection's server takes, as the server
   * announces it or as the broker's documented default; `null`: no limit worth checking.
   */
  limitBytes(connection: C, destination: BrokerDestination<K>): number | null;
  /** Publishes one message; resolves once the broker has it (ack, confirm, reply). */
  publish(
    connection: C,
    destination: BrokerDestination<K>,
    message: EffectMessage,
    delivery: EffectDelivery,
  ): Promise<void>;
}

export interface BrokerTargetOptions {
  now?: () => number;
  /** A CloudEvents effect's `source` when it names none. */
  source?: string;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** The configured effects: those of this target's kind are reported (not yet connected) at once. */
  effects?: readonly EffectDefinition[];
}

export function createBrokerTarget<C, K extends BrokerKind>(
  client: BrokerClient<C, K>,
  options: BrokerTargetOptions = {},
): EffectTarget {
  const now = options.now ?? Date.now;
  const source = options.source ?? DEFAULT_CLOUDEVENTS_SOURCE;
  const keepers = new Map<string, ConnectionKeeper<C>>();

  // The dispatcher sends an effect here because it has this destination (destinationOf): the
  // check only narrows the type, in one place for the three brokers.
  function destinationIn(definition: EffectDefinition): BrokerDestination<K> {
    const destination = definition[client.kind];
    if (!destination)
      throw new DeliveryError(`effect "${definition.name}" has no ${client.kind} destination`);
    return destination as BrokerDestination<K>;
  }

  function keeperFor(definition: EffectDefinition): ConnectionKeeper<C> {
    let keeper = keepers.get(definition.name);
    if (keeper) return keeper;
    const urls = destinationUrls(definition);
    const made: ConnectionKeeper<C> = keepConnection({
      // The destination as it may be shown in errors and logs: scheme, host and port.
      name: `${client.kind} ${urls.map(redactToOrigin).join(",") || "(none)"}`,
      now,
      redact: (text) => redactUrlsIn(text, urls),
      open: async () => {
        // Bound to this connection: a late close event of an earlier one must not drop it.
        let connection: C | null = null;
        let brokeWhileOpening: unknown = null;
        const opened = await client.open(destinationIn(definition), definition, (reason) => {
          const why = reason ?? new Error("connection closed");
          if (connection === null) brokeWhileOpening = why;
          else made.drop(connection, why);
        });
        if (brokeWhileOpening !== null) {
          await client.close(opened).catch(() => {});
          throw brokeWhileOpening;
        }
        connection = opened;
        return opened;
      },
      close: (connection) => client.close(connection),
      ...(options.minBackoffMs !== undefined ? { minBackoffMs: options.minBackoffMs } : {}),
      ...(options.maxBackoffMs !== undefined ? { maxBackoffMs: options.maxBackoffMs } : {}),
    });
    keeper = made;
    keepers.set(definition.name, keeper);
    return keeper;
  }

  for (const definition of options.effects ?? [])
    if (destinationOf(definition) === client.kind) keeperFor(definition);

  return {
    kind: client.kind,
    async deliver(definition, delivery) {
      // Read before the first await: the attempt's span is current only until then (tracing.ts).
      const trace = effectPropagationHeaders();
      const keeper = keeperFor(definition);
      const connection = await keeper.get();
      const destination = destinationIn(definition);
      // Never a message the broker must refuse: that one would be retried until it died.
      const limit = messageLimit(definition.maxMessageBytes, client.limitBytes(connection, destination));
      const message = fitEffectMessage(definition, delivery, source, limit, trace);
      await client.publish(connection, destination, message, delivery);
    },
    status(): DestinationStatus[] {
      return [...keepers].map(([effect, keeper]) => ({
        effect,
        destination: client.kind,
        ...keeper.status(),
      }));
    },
    async close() {
      await Promise.all([...keepers.values()].map((keeper) => keeper.close()));
      keepers.clear();
    },
  };
}
