import * as z from "zod";
import { providerNameSchema } from "../core/validation.js";
import { httpUrl } from "./provider-config-schema.js";

// An effect's configuration: when it fires, and its one destination — a signed HTTP POST (`url`)
// or a message broker (`nats`, `amqp`, `redis`). Kept apart from config-schema.ts so that file
// stays one sitting long; the shapes are a contract with users (add keys, never rename them).

const secret = z
  .string()
  .min(1, "must not be empty")
  .refine(
    (value) => !value.startsWith("whsec_") || /^whsec_[A-Za-z0-9+/]+={0,2}$/.test(value),
    "a whsec_ secret must be followed by base64",
  );

/** The smallest `maxMessageBytes`: a job's metadata (64 KB) and the rest of the message fit in it. */
const MIN_MESSAGE_BYTES = 128 * 1024;

const positiveSeconds = z.number().finite().positive();

/** A NATS subject: dot-separated tokens, no wildcards or whitespace (a publish names one subject). */
const natsSubject = z
  .string()
  .regex(/^[^\s.*>]+(\.[^\s.*>]+)*$/, "must be a NATS subject like finality.settled (no wildcards)");

const natsServer = z.url({
  protocol: /^(nats|tls|wss?)$/,
  error: "must be a nats://, tls:// or ws(s):// URL",
});

const natsDestinationSchema = z.strictObject({
  /** One server URL, a comma-separated list, or an array. */
  servers: z
    .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
    .transform((value) => (Array.isArray(value) ? value : value.split(",").map((server) => server.trim())))
    .pipe(z.array(natsServer).min(1)),
  subject: natsSubject,
  /** The JetStream stream that must capture `subject`; created (file storage) when missing. */
  stream: z.string().regex(/^[A-Za-z0-9_-]+$/, "must be a JetStream stream name (letters, digits, - or _)"),
  /**
   * The duplicate window of a stream Finality creates (default 2 min, JetStream's own): a retry
   * within it is dropped by the server. Outside it the idempotency key still names the repeat.
   */
  duplicateWindowSeconds: positiveSeconds.optional(),
});

const amqpDestinationSchema = z.strictObject({
  url: z.url({ protocol: /^amqps?$/, error: "must be an amqp:// or amqps:// URL" }),
  /** "" is the default exchange: then `routingKey` is the queue's name. */
  exchange: z.string().max(255),
  routingKey: z.string().max(255),
  /** A durable queue to declare (and bind to `exchange` by `routingKey`) when connecting. */
  queue: z.string().min(1).max(255).optional(),
});

const redisDestinationSchema = z.strictObject({
  url: z.url({ protocol: /^rediss?$/, error: "must be a redis:// or rediss:// URL" }),
  stream: z.string().min(1).max(512),
  /** How long the guard against a second XADD of one key lives (default 7 days > maxAgeSeconds). */
  dedupeSeconds: positiveSeconds.optional(),
  /** Approximate MAXLEN trim of the stream on each XADD; none: the stream is not trimmed. */
  maxLength: z.number().int().positive().optional(),
});

const cloudEventsOptionsSchema = z.strictObject({
  /** structured: the whole event as JSON; binary: the attributes as headers, the body is `data`. */
  mode: z.enum(["structured", "binary"]).optional(),
  /** The event's `source`; default `finality://<host name>`. */
  source: z.string().min(1).optional(),
});

/** The destinations an effect may name, exactly one each. */
const DESTINATION_KEYS = ["url", "nats", "amqp", "redis"] as const;

export const effectSchema = z
  .strictObject({
    name: z
      .string()
      .regex(/^[a-z0-9][a-z0-9_.-]*$/, "must be lowercase letters, digits, '.', '-' or '_'")
      .max(64),
    url: httpUrl.optional(),
    /** Signs a url effect's POST (Standard Webhooks); brokers authenticate the connection instead. */
    secret: secret.optional(),
    nats: natsDestinationSchema.optional(),
    amqp: amqpDestinationSchema.optional(),
    redis: redisDestinationSchema.optional(),
    /** The message: Finality's own JSON (the default), or a CloudEvents 1.0 event. */
    format: z.enum(["finality", "cloudevents"]).optional(),
    cloudevents: cloudEventsOptionsSchema.optional(),
    /**
     * The largest message the destination takes (the lower of this and what a broker announces).
     * At least 128 KiB: room for a job whose result and error are cut, with its 64 KB metadata.
     */
    maxMessageBytes: z.number().int().min(MIN_MESSAGE_BYTES).optional(),
    on: z
      .array(z.enum(["succeeded", "failed", "cancelled", "expired", "lost", "stuck", "orphaned"]))
      .min(1)
      .default(["succeeded", "failed", "cancelled", "expired", "lost"]),
    providers: z.array(providerNameSchema).min(1).optional(),
    kinds: z.array(z.string().min(1)).min(1).optional(),
  })
  .superRefine((effect, ctx) => {
    const named = DESTINATION_KEYS.filter((key) => effect[key] !== undefined);
    if (named.length !== 1)
      ctx.addIssue({
        code: "custom",
        path: named.length === 0 ? [] : [named[1] ?? named[0] ?? "url"],
        message:
          named.length === 0
            ? 'needs one destination: "url", "nats", "amqp" or "redis"'
            : `names ${named.map((k) => `"${k}"`).join(" and ")}: an effect has exactly one destination`,
      });
    if (effect.url !== undefined && effect.secret === undefined)
      ctx.addIssue({ code: "custom", path: ["secret"], message: "is required with url (it signs the POST)" });
    if (effect.url === undefined && effect.secret !== undefined)
      ctx.addIssue({ code: "custom", path: ["secret"], message: "applies to url effects only" });
    if (effect.cloudevents !== undefined && effect.format !== "cloudevents")
      ctx.addIssue({ code: "custom", path: ["cloudevents"], message: 'needs format: "cloudevents"' });
  });
