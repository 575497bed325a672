// The broker destinations and CloudEvents options an effect definition names. Their own file
// because effect-target.ts names the definition: were they there, effect-definitions.ts and
// effect-target.ts would import each other (a cycle).

export interface NatsDestination {
  servers: readonly string[];
  subject: string;
  /** The JetStream stream that captures `subject` (created when missing). */
  stream: string;
  duplicateWindowSeconds?: number;
}

export interface AmqpDestination {
  url: string;
  exchange: string;
  routingKey: string;
  queue?: string;
}

export interface RedisDestination {
  url: string;
  stream: string;
  dedupeSeconds?: number;
  maxLength?: number;
}

/** How a CloudEvents effect is carried: the whole event as JSON, or attributes as headers. */
export interface CloudEventsOptions {
  mode?: "structured" | "binary";
  source?: string;
}
