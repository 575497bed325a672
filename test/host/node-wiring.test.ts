import { readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { configSchema } from "../../src/config/config-schema.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher } from "../../src/engine/dispatcher.js";
import { createHttpEffectDeliverer } from "../../src/engine/http-effect-target.js";
import { createNodeHttpTransport } from "../../src/engine/node-http-transport.js";
import { createReconciler } from "../../src/engine/reconciler.js";
import { createRetentionLoop } from "../../src/engine/retention.js";
import { type RunningService, serve } from "../../src/host/node/serve.js";
import { startNodeServer } from "../../src/http/node-server.js";
import { createNodeWebhookHandler } from "../../src/http/node-webhook-handler.js";
import { createWebhookIntake } from "../../src/http/webhook-intake.js";
import { createWorkerAuthorizer } from "../../src/http/worker-auth.js";
import { createProviderAdapter } from "../../src/providers/create-provider-adapter.js";
import { createLeaseSweeper } from "../../src/runs/lease-sweeper-loop.js";
import { createRunService } from "../../src/runs/run-service.js";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { signStandardWebhook } from "../../src/webhooks/schemes/standard-webhooks/node.js";
import { schemaKeys } from "../docs/schema-keys.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  requirePostgres,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp-dir.js";
import { OTHER_SECRET, SECRET, signWith } from "../http/helpers/webhooks.js";
import { CONFIG, ELSEWHERE, POSTGRES_STORE, WIRING_KEYS } from "./wiring-config.js";

// `finality serve` built from a configuration file on a real SQLite file (and once on
// PostgreSQL for the store's own keys): each part that uses an option is wrapped (it still runs
// for real) so the test sees what it was given. Every key of the configuration's schema has an
// assertion here or names the test that checks it: a key added without either fails the test.

vi.mock("../../src/engine/dispatcher.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/engine/dispatcher.js")>();
  return { ...actual, createDispatcher: vi.fn(actual.createDispatcher) };
});
vi.mock("../../src/engine/http-effect-target.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/engine/http-effect-target.js")>();
  return { ...actual, createHttpEffectDeliverer: vi.fn(actual.createHttpEffectDeliverer) };
});
vi.mock("../../src/engine/node-http-transport.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/engine/node-http-transport.js")>();
  return { ...actual, createNodeHttpTransport: vi.fn(actual.createNodeHttpTransport) };
});
vi.mock("../../src/engine/reconciler.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/engine/reconciler.js")>();
  return { ...actual, createReconciler: vi.fn(actual.createReconciler) };
});
vi.mock("../../src/engine/retention.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/engine/retention.js")>();
  return { ...actual, createRetentionLoop: vi.fn(actual.createRetentionLoop) };
});
vi.mock("../../src/engine/create-finality.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/engine/create-finality.js")>();
  return { ...actual, createFinality: vi.fn(actual.createFinality) };
});
vi.mock("../../src/runs/lease-sweeper-loop.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/runs/lease-sweeper-loop.js")>();
  return { ...actual, createLeaseSweeper: vi.fn(actual.createLeaseSweeper) };
});
vi.mock("../../src/runs/run-service.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/runs/run-service.js")>();
  return { ...actual, createRunService: vi.fn(actual.createRunService) };
});
vi.mock("../../src/store/sqlite/sqlite-store.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/store/sqlite/sqlite-store.js")>();
  return { ...actual, createSqliteStore: vi.fn(actual.createSqliteStore) };
});
vi.mock("../../src/store/postgres/postgres-store.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/store/postgres/postgres-store.js")>();
  return { ...actual, openPostgresStore: vi.fn(actual.openPostgresStore) };
});
vi.mock("../../src/http/node-webhook-handler.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/http/node-webhook-handler.js")>();
  return { ...actual, createNodeWebhookHandler: vi.fn(actual.createNodeWebhookHandler) };
});
vi.mock("../../src/http/node-server.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/http/node-server.js")>();
  return { ...actual, startNodeServer: vi.fn(actual.startNodeServer) };
});
vi.mock("../../src/http/webhook-intake.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/http/webhook-intake.js")>();
  return { ...actual, createWebhookIntake: vi.fn(actual.createWebhookIntake) };
});
vi.mock("../../src/http/worker-auth.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/http/worker-auth.js")>();
  return { ...actual, createWorkerAuthorizer: vi.fn(actual.createWorkerAuthorizer) };
});
vi.mock("../../src/providers/create-provider-adapter.js", async (importOriginal) => {
  const actual = await importOriginal<typeof import("../../src/providers/create-provider-adapter.js")>();
  return { ...actual, createProviderAdapter: vi.fn(actual.createProviderAdapter) };
});

/** The one call a part got (a second one would be a second build of it). */
function onlyCall<T extends (...args: never[]) => unknown>(fn: T): Parameters<T> {
  const calls = vi.mocked(fn).mock.calls;
  expect(calls, fn.name).toHaveLength(1);
  return calls[0] as Parameters<T>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

const ROOT = resolve(import.meta.dirname, "../..");
const dir = tempDir("finality-wiring-");
const logLines: Record<string, unknown>[] = [];
let service: RunningService;
let config: ReturnType<typeof CONFIG>;

beforeAll(async () => {
  config = CONFIG({ sqlite: dir.file("ledger.db"), port: await freePort() });
  const file = dir.file("finality.json");
  writeFileSync(file, JSON.stringify(config));
  service = await serve({
    configFile: file,
    flags: {},
    env: {},
    // Not a terminal: only `log.format` "pretty" makes the service log here.
    prettyLog: {
      interactive: false,
      stream: () => ({ write: (line: string) => void logLines.push(JSON.parse(line)) }),
    },
  });
});
afterAll(async () => {
  await service?.stop();
  dir.cleanup();
});

const lane = (name: string) => onlyCall(createReconciler)[1].providers[name];
const seconds = (s: number) => s * 1000;

/** Each key of the configuration (as test/docs/schema-keys.ts names them) and what proves it reaches its part. */
const WIRED: Record<string, () => void | Promise<void>> = {
  "server.host": () => expect(new URL(service.url).hostname).toBe(config.server.host),
  "server.port": () => expect(Number(new URL(service.url).port)).toBe(config.server.port),
  "server.bodyLimitBytes": async () => {
    expect(onlyCall(createNodeWebhookHandler)[0].bodyLimitBytes).toBe(config.server.bodyLimitBytes);
    // Signed: a request without signature headers is refused (401) before its body is read.
    const body = "x".repeat(config.server.bodyLimitBytes + 1);
    const answer = await fetch(`${service.url}/webhooks/acme`, {
      method: "POST",
      headers: signWith(SECRET, body),
      body,
    });
    expect(answer.status).toBe(413);
  },
  "server.bodyBytesInFlight": () =>
    expect(onlyCall(createNodeWebhookHandler)[0].bodyBytesInFlight).toBe(config.server.bodyBytesInFlight),
  "server.keepAliveTimeoutMs": () =>
    expect(onlyCall(startNodeServer)[1].keepAliveTimeoutMs).toBe(config.server.keepAliveTimeoutMs),
  "server.headersTimeoutMs": () =>
    expect(onlyCall(startNodeServer)[1].headersTimeoutMs).toBe(config.server.headersTimeoutMs),
  "server.apiToken": async () => {
    expect((await fetch(`${service.url}/v1/jobs`)).status).toBe(401);
    const authorised = await fetch(`${service.url}/v1/jobs`, {
      headers: { authorization: `Bearer ${config.server.apiToken}` },
    });
    expect(authorised.status).toBe(200);
  },
  "store.sqlite": () => expect(onlyCall(createSqliteStore)[0].path).toBe(config.store.sqlite),
  "store.synchronous": () =>
    expect(onlyCall(createSqliteStore)[0].synchronous).toBe(config.store.synchronous),
  // The pragma each connection then holds: test/store/sqlite-cache-size.test.ts.
  "store.cacheMiB": () => expect(onlyCall(createSqliteStore)[0].cacheMiB).toBe(config.store.cacheMiB),
  "providers.<name>": () => {
    // Each instance's adapter is built once, from its configuration as written, and both the
    // webhook intake and the reconciler use that one adapter.
    const calls = vi.mocked(createProviderAdapter).mock.calls;
    expect(calls.map(([name]) => name).sort()).toEqual(Object.keys(config.providers).sort());
    const receivers = onlyCall(createWebhookIntake)[0].receivers;
    for (const [index, [name, provider]] of calls.entries()) {
      expect(provider).toMatchObject(config.providers[name as keyof typeof config.providers]);
      const adapter = vi.mocked(createProviderAdapter).mock.results[index]?.value;
      expect(receivers.get(name)).toBe(adapter.receiver);
      expect(lane(name)?.poller ?? null).toBe(adapter.poller);
    }
  },
  "providers.<name>.unknownJobs": () =>
    expect(onlyCall(createFinality)[0].providers?.acme?.unknownJobs).toBe(config.providers.acme.unknownJobs),
  "providers.<name>.intentTimeoutSeconds": () =>
    expect(onlyCall(createFinality)[0].providers?.acme?.intentTimeoutSeconds).toBe(
      config.providers.acme.intentTimeoutSeconds,
    ),
  intentTimeoutSeconds: () => {
    expect(onlyCall(createFinality)[0].intentTimeoutSeconds).toBe(config.intentTimeoutSeconds);
    expect(onlyCall(createFinality)[0].providers?.quiet?.intentTimeoutSeconds).toBe(
      config.intentTimeoutSeconds,
    );
  },
  // What it does with it: test/engine/ordering-time.test.ts (a time ahead by more is cut).
  "ingest.maxClockSkewSeconds": () =>
    expect(onlyCall(createFinality)[0].maxClockSkewSeconds).toBe(config.ingest.maxClockSkewSeconds),
  "reconcile.graceSeconds": () => {
    expect(onlyCall(createFinality)[0].graceSeconds).toBe(config.reconcile.graceSeconds);
    expect(onlyCall(createFinality)[0].providers?.quiet?.graceSeconds).toBe(config.reconcile.graceSeconds);
  },
  "reconcile.minIntervalSeconds": () =>
    expect(lane("quiet")?.minMs).toBe(seconds(config.reconcile.minIntervalSeconds)),
  "reconcile.maxIntervalSeconds": () =>
    expect(lane("quiet")?.maxMs).toBe(seconds(config.reconcile.maxIntervalSeconds)),
  "reconcile.stuckAfterSeconds": () =>
    expect(lane("quiet")?.stuckAfterMs).toBe(seconds(config.reconcile.stuckAfterSeconds)),
  "reconcile.concurrency": () => expect(lane("quiet")?.concurrency).toBe(config.reconcile.concurrency),
  "reconcile.ratePerSecond": () =>
    expect(lane("quiet")?.rateLimit?.perSecond).toBe(config.reconcile.ratePerSecond),
  "reconcile.burst": () => expect(lane("quiet")?.rateLimit?.burst).toBe(config.reconcile.burst),
  "providers.<name>.reconcile.graceSeconds": () =>
    expect(onlyCall(createFinality)[0].providers?.acme?.graceSeconds).toBe(
      config.providers.acme.reconcile.graceSeconds,
    ),
  "providers.<name>.reconcile.minIntervalSeconds": () =>
    expect(lane("acme")?.minMs).toBe(seconds(config.providers.acme.reconcile.minIntervalSeconds)),
  "providers.<name>.reconcile.maxIntervalSeconds": () =>
    expect(lane("acme")?.maxMs).toBe(seconds(config.providers.acme.reconcile.maxIntervalSeconds)),
  "providers.<name>.reconcile.stuckAfterSeconds": () =>
    expect(lane("acme")?.stuckAfterMs).toBe(seconds(config.providers.acme.reconcile.stuckAfterSeconds)),
  "providers.<name>.reconcile.concurrency": () =>
    expect(lane("acme")?.concurrency).toBe(config.providers.acme.reconcile.concurrency),
  "providers.<name>.reconcile.ratePerSecond": () =>
    expect(lane("acme")?.rateLimit?.perSecond).toBe(config.providers.acme.reconcile.ratePerSecond),
  "providers.<name>.reconcile.burst": () =>
    expect(lane("acme")?.rateLimit?.burst).toBe(config.providers.acme.reconcile.burst),
  "effects[].name": () => expect(effectDefinition().name).toBe(config.effects[0]?.name),
  "effects[].url": () => expect(effectDefinition().url).toBe(config.effects[0]?.url),
  "effects[].secret": () => expect(effectDefinition().secret).toBe(config.effects[0]?.secret),
  "effects[].maxMessageBytes": () =>
    expect(effectDefinition().maxMessageBytes).toBe(config.effects[0]?.maxMessageBytes),
  "effects[].on": () => expect(effectDefinition().on).toEqual(config.effects[0]?.on),
  "effects[].providers": () => expect(effectDefinition().providers).toEqual(config.effects[0]?.providers),
  "effects[].kinds": () => expect(effectDefinition().kinds).toEqual(config.effects[0]?.kinds),
  ...brokerKeys("nats", "bus", ["servers", "subject", "stream", "duplicateWindowSeconds"]),
  ...brokerKeys("amqp", "q", ["url", "exchange", "routingKey", "queue"]),
  ...brokerKeys("redis", "s", ["url", "stream", "dedupeSeconds", "maxLength"]),
  "effects[].format": () => expect(effectDefinition("bus").format).toBe("cloudevents"),
  "effects[].cloudevents.mode": () => expect(effectDefinition("bus").cloudevents?.mode).toBe("binary"),
  "effects[].cloudevents.source": () =>
    expect(effectDefinition("bus").cloudevents?.source).toBe("finality://wiring"),
  "effectDelivery.enabled": () => void onlyCall(createDispatcher),
  "effectDelivery.concurrency": () => {
    expect(onlyCall(createDispatcher)[1]?.concurrency).toBe(config.effectDelivery.concurrency);
    expect(onlyCall(createNodeHttpTransport)[0]?.maxSockets).toBe(config.effectDelivery.concurrency);
  },
  "effectDelivery.timeoutSeconds": () =>
    expect(onlyCall(createDispatcher)[1]?.timeoutMs).toBe(seconds(config.effectDelivery.timeoutSeconds)),
  "effectDelivery.leaseSeconds": () =>
    expect(onlyCall(createDispatcher)[1]?.leaseMs).toBe(seconds(config.effectDelivery.leaseSeconds)),
  "effectDelivery.pollIntervalSeconds": () =>
    expect(onlyCall(createDispatcher)[1]?.pollIntervalMs).toBe(
      seconds(config.effectDelivery.pollIntervalSeconds),
    ),
  "effectDelivery.retrySeconds": () =>
    expect(onlyCall(createDispatcher)[1]?.retry?.scheduleMs).toEqual(
      config.effectDelivery.retrySeconds.map(seconds),
    ),
  "effectDelivery.maxAgeSeconds": () =>
    expect(onlyCall(createDispatcher)[1]?.retry?.maxAgeMs).toBe(seconds(config.effectDelivery.maxAgeSeconds)),
  "effectDelivery.maxAttempts": () =>
    expect(onlyCall(createDispatcher)[1]?.retry?.maxAttempts).toBe(config.effectDelivery.maxAttempts),
  ...Object.fromEntries(
    Object.keys(configSchema.parse({}).retention)
      .filter((key) => key !== "intervalMinutes")
      .map((key) => [
        `retention.${key}`,
        () =>
          expect(onlyCall(createRetentionLoop)[1]).toMatchObject({
            [key]: config.retention[key as "eventsDays"],
          }),
      ]),
  ),
  "retention.intervalMinutes": () =>
    expect(onlyCall(createRetentionLoop)[2].intervalMs).toBe(config.retention.intervalMinutes * 60_000),
  "workers.pools.<name>.token": () => {
    expect(onlyCall(createWorkerAuthorizer)[0]).toEqual(config.workers.pools);
    expect(onlyCall(createWorkerAuthorizer)[0].render?.token).toBe(config.workers.pools.render.token);
  },
  "workers.pools.<name>.kinds": () =>
    expect(onlyCall(createWorkerAuthorizer)[0].render?.kinds).toEqual(config.workers.pools.render.kinds),
  "workers.leaseSeconds": () =>
    expect(onlyCall(createRunService)[0].defaultLeaseSeconds).toBe(config.workers.leaseSeconds),
  "workers.maxAttempts": () =>
    expect(onlyCall(createRunService)[0].defaultMaxAttempts).toBe(config.workers.maxAttempts),
  "workers.retryBaseSeconds": () =>
    expect(onlyCall(createRunService)[0].retry?.baseDelayMs).toBe(seconds(config.workers.retryBaseSeconds)),
  "workers.retryMaxSeconds": () =>
    expect(onlyCall(createRunService)[0].retry?.maxDelayMs).toBe(seconds(config.workers.retryMaxSeconds)),
  "workers.sweepIntervalSeconds": () =>
    expect(onlyCall(createLeaseSweeper)[1]?.intervalMs).toBe(seconds(config.workers.sweepIntervalSeconds)),
  "workers.maxUnstartedReleases": () =>
    expect(onlyCall(createRunService)[0].maxUnstartedReleases).toBe(config.workers.maxUnstartedReleases),
  "log.level": () => {
    // "warn": the provider without a webhook secret is warned about, and "listening" (info) is not.
    expect(logLines.map((line) => line.msg)).toContain(
      "provider has no webhook secret: its webhooks are refused (add providers.quiet.webhook to the configuration)",
    );
    expect(logLines.filter((line) => (line.level as number) < 40)).toEqual([]);
  },
  "log.format": () => expect(logLines.length).toBeGreaterThan(0),
};

function effectDefinition(name = "notify") {
  const effects = onlyCall(createFinality)[0].effects ?? [];
  expect(effects.map((effect) => effect.name)).toEqual(config.effects.map((effect) => effect.name));
  const found = effects.find((effect) => effect.name === name);
  if (!found) throw new Error(`no effect ${name}`);
  return found;
}

/**
 * A broker effect's keys reach its definition, and the dispatcher holds that broker's target,
 * which reports the effect's connection (for /readyz and /metrics) before any delivery.
 */
function brokerKeys(kind: "nats" | "amqp" | "redis", name: string, keys: string[]) {
  const given = () => config.effects.find((effect) => effect.name === name) as Record<string, unknown>;
  return Object.fromEntries(
    keys.map((key) => [
      `effects[].${kind}.${key}`,
      () => {
        const definition = effectDefinition(name) as unknown as Record<string, Record<string, unknown>>;
        expect(definition[kind]?.[key]).toEqual((given()[kind] as Record<string, unknown>)[key]);
        const target = onlyCall(createDispatcher)[1]?.targets?.[kind];
        expect(target?.status?.()).toEqual([{ effect: name, destination: kind, connected: false }]);
      },
    ]),
  );
}

const POSTGRES_WIRED: Record<string, (options: Parameters<typeof openPostgresStore>[0]) => void> = {
  "store.postgres": (o) => expect(o.url).toBe(POSTGRES_TEST_URL),
  "store.schema": (o) => expect(o.schema).toBe(pgSchema),
  "store.poolSize": (o) => expect(o.max).toBe(POSTGRES_STORE.poolSize),
  "store.connectTimeoutSeconds": (o) =>
    expect(o.connectTimeoutSeconds).toBe(POSTGRES_STORE.connectTimeoutSeconds),
  "store.statementTimeoutSeconds": (o) =>
    expect(o.statementTimeoutMs).toBe(seconds(POSTGRES_STORE.statementTimeoutSeconds)),
  "store.lockTimeoutSeconds": (o) => expect(o.lockTimeoutMs).toBe(seconds(POSTGRES_STORE.lockTimeoutSeconds)),
  "store.idleInTransactionTimeoutSeconds": (o) =>
    expect(o.idleInTransactionTimeoutMs).toBe(seconds(POSTGRES_STORE.idleInTransactionTimeoutSeconds)),
  "store.queryTimeoutSeconds": (o) =>
    expect(o.queryTimeoutMs).toBe(seconds(POSTGRES_STORE.queryTimeoutSeconds)),
};
const pgSchema = uniqueSchemaName("finality_registry_wiring");

describe("every configuration key reaches the part that uses it", () => {
  it("each key of the schema has a wiring assertion here or names the test that checks it", () => {
    const keys = WIRING_KEYS(schemaKeys(configSchema));
    const covered = [...Object.keys(WIRED), ...Object.keys(POSTGRES_WIRED), ...Object.keys(ELSEWHERE)];
    expect(keys.filter((key) => !covered.includes(key))).toEqual([]);
    // And nothing is asserted for a key the schema no longer has.
    expect(covered.filter((key) => !keys.includes(key))).toEqual([]);
  });

  it.each(Object.entries(ELSEWHERE))("%s is checked where it says", (key, where) => {
    if ("unchecked" in where) return expect(where.unchecked).not.toBe("");
    expect(readFileSync(join(ROOT, where.test), "utf8")).toContain(key.split(".").at(-1));
  });

  it("effects are signed with node:crypto and sent over node:http", () => {
    const [deliverer] = onlyCall(createHttpEffectDeliverer);
    expect(deliverer?.sign).toBe(signStandardWebhook);
    expect(deliverer?.transport).toBe(vi.mocked(createNodeHttpTransport).mock.results[0]?.value);
  });

  it("a webhook signed with the configured secret is taken, and one signed otherwise refused", async () => {
    const body = JSON.stringify({ jobId: "job-1", state: "running" });
    const post = (headers: Record<string, string>) =>
      fetch(`${service.url}/webhooks/acme`, { method: "POST", headers, body });
    expect((await post(signWith(SECRET, body))).status).toBe(200);
    expect((await post(signWith(OTHER_SECRET, body))).status).toBe(401);
  });

  it.each(Object.keys(WIRED))("%s", async (key) => {
    await WIRED[key]?.();
  });

  describe("on PostgreSQL", () => {
    const sql = adminClient();
    let options: Parameters<typeof openPostgresStore>[0];
    beforeAll(async () => {
      await requirePostgres("the PostgreSQL store's keys reach the store");
      const pgDir = tempDir("finality-wiring-pg-");
      const file = pgDir.file("finality.json");
      const pgConfig = {
        ...CONFIG({ sqlite: "unused", port: 0 }),
        store: { postgres: POSTGRES_TEST_URL, schema: pgSchema, ...POSTGRES_STORE },
      };
      writeFileSync(file, JSON.stringify(pgConfig));
      const pg = await serve({ configFile: file, flags: {}, env: {} });
      options = onlyCall(openPostgresStore)[0];
      await pg.stop();
      pgDir.cleanup();
    });
    afterAll(async () => {
      await dropSchema(sql, pgSchema);
      await sql.end();
    });
    it.each(Object.keys(POSTGRES_WIRED))("%s", (key) => POSTGRES_WIRED[key]?.(options));
  });
});
