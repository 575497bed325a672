import { Redis } from "ioredis";
import type { EffectTarget } from "../effect-target.js";
import { truncatedHeader } from "../message-fit.js";
import { type BrokerTargetOptions, createBrokerTarget } from "./broker-target.js";

// Redis Streams. Redis has no message id to dedupe on, so one Lua script (atomic on the server)
// appends the entry and remembers its id under a guard key in the same step: a retry whose first
// XADD did land (its reply was lost) finds the guard and gets the first entry's id back instead
// of appending again. Delivered means the script's reply came back.
//
// Entry fields: `idempotencyKey`, `attempt` (of the first append), `contentType`, `body`,
// `truncated` (the job's fields cut to fit the server's limit, when any), and for
// CloudEvents binary mode one `ce-<attribute>` field each. Redis has no CloudEvents binding: this
// follows the NATS/HTTP binary binding's `ce-` names, and structured mode puts the whole event in
// `body` with contentType `application/cloudevents+json`.

/** KEYS[1] the stream, KEYS[2] the guard; ARGV[1] guard TTL s, ARGV[2] MAXLEN (0: none), then field/value pairs. */
const APPEND_ONCE = `
local id = redis.call('GET', KEYS[2])
if id then return {id, 1} end
local args = {'XADD', KEYS[1]}
local maxlen = tonumber(ARGV[2])
if maxlen > 0 then table.insert(args, 'MAXLEN'); table.insert(args, '~'); table.insert(args, maxlen) end
table.insert(args, '*')
for i = 3, #ARGV do table.insert(args, ARGV[i]) end
id = redis.call(unpack(args))
redis.call('SET', KEYS[2], id, 'EX', ARGV[1])
return {id, 0}
`;

/** Longer than the outbox's default maximum age (3 days): a retry always finds its guard. */
const DEFAULT_DEDUPE_SECONDS = 7 * 86_400;

type RedisWithAppend = Redis & {
  finalityAppendOnce(stream: string, guard: string, ...args: (string | number)[]): Promise<[string, number]>;
};

/** A connection and the largest field value its server takes. */
interface RedisConnection {
  client: RedisWithAppend;
  maxBulkBytes: number;
}

/** Redis's default `proto-max-bulk-len` (512 MB), for a server that will not say (CONFIG disabled). */
const DEFAULT_MAX_BULK_BYTES = 512 * 1024 * 1024;

/**
 * The server's `proto-max-bulk-len`: a field value over it is refused ("Protocol error: invalid
 * bulk length") on every retry. Managed Redis often refuses CONFIG: then the default.
 */
async function maxBulkBytes(client: Redis): Promise<number> {
  try {
    const answer = (await client.config("GET", "proto-max-bulk-len")) as string[];
    const value = Number(answer[1]);
    return Number.isSafeInteger(value) && value > 0 ? value : DEFAULT_MAX_BULK_BYTES;
  } catch {
    return DEFAULT_MAX_BULK_BYTES;
  }
}

/** The guard key of an idempotency key on a stream. */
export function redisGuardKey(stream: string, idempotencyKey: string): string {
  return `${stream}:finality-dedupe:${idempotencyKey}`;
}

export function createRedisEffectTarget(options: BrokerTargetOptions = {}): EffectTarget {
  return createBrokerTarget<RedisConnection, "redis">(
    {
      kind: "redis",
      async open(redis, definition, broke) {
        const client = new Redis(redis.url, {
          lazyConnect: true,
          // Fail at once while disconnected (the outbox retries); never queue commands in memory.
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          retryStrategy: () => null,
          connectTimeout: 5000,
          connectionName: `finality-effect-${definition.name}`,
        }) as RedisWithAppend;
        client.on("error", () => {}); // "end" follows; an unheard "error" would end the process.
        client.defineCommand("finalityAppendOnce", { numberOfKeys: 2, lua: APPEND_ONCE });
        try {
          await client.connect();
        } catch (error) {
          client.disconnect();
          throw error;
        }
        client.once("end", () => broke(new Error("connection closed")));
        return { client, maxBulkBytes: await maxBulkBytes(client) };
      },
      async close({ client }) {
        client.disconnect();
      },
      limitBytes: ({ maxBulkBytes }) => maxBulkBytes,
      async publish({ client }, redis, message, delivery) {
        const fields: string[] = [
          "idempotencyKey",
          delivery.idempotencyKey,
          "attempt",
          String(delivery.attempt),
          "contentType",
          message.contentType,
          "body",
          message.body,
        ];
        for (const [name, value] of Object.entries(message.attributes ?? {}))
          fields.push(`ce-${name}`, value);
        for (const [name, value] of Object.entries(message.trace ?? {})) fields.push(name, value);
        const truncated = truncatedHeader(message);
        if (truncated !== null) fields.push("truncated", truncated);
        await client.finalityAppendOnce(
          redis.stream,
          redisGuardKey(redis.stream, delivery.idempotencyKey),
          Math.ceil(redis.dedupeSeconds ?? DEFAULT_DEDUPE_SECONDS),
          redis.maxLength ?? 0,
          ...fields,
        );
      },
    },
    options,
  );
}
