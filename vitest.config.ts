import { defineConfig } from "vitest/config";

// Two projects, disjoint: `npm test` runs "fast" (needs only `npm install` and PostgreSQL, minutes),
// `npm run test:all` both. `npx vitest run test/x.test.ts` finds a file in either.
// A test goes in FULL_ONLY when it needs another service (brokers, Chromium), spawns many processes
// (the CLI, chaos, replicas, packing) or runs long (fuzzers, the simulator past its first 300
// seeds): a folder where the whole folder is such, else the file by name. test/README.md is the map.
export const FULL_ONLY = [
  "test/brokers/**", // NATS JetStream, RabbitMQ, Redis
  "test/browser/**", // Chromium
  "test/chaos/**", // SIGKILL and PostgreSQL fault runs
  "test/cloudflare/**", // workerd, through miniflare
  "test/package/**", // npm pack and install
  "test/cli/**", // the built CLI, one process per command
  "test/fuzz/**", // thousands of generated inputs each
  "test/parity/**", // every scenario on SQLite, three PostgreSQL replicas and sharded workerd
  "test/sim/sim-more.test.ts", // seeds 301–1150
  "test/sim/sim-rest.test.ts", // seeds 1151–2000
  "test/sim/mutant-broker.test.ts",
  "test/service/**", // `finality serve` processes: crashes, two dispatchers, replicas, a silent database
  // One process or more per test, started from dist/ (serve or the CLI): `npm test` stays in minutes.
  "test/http/config-errors.test.ts",
  "test/http/graceful-shutdown.test.ts",
  "test/http/webhook-ordering.test.ts",
  "test/host/lazy-modules.test.ts",
  "test/housekeeping/backup.test.ts",
  "test/settlements/consumer-example.test.ts",
  "test/settlements/settlements-cli.test.ts",
  "test/settlements/settlement-stream-restart.test.ts", // SIGKILL and restart
  "test/housekeeping/soak.test.ts",
  "test/telemetry/broker-trace.test.ts", // NATS
];

const shared = { testTimeout: 60_000, hookTimeout: 60_000, pool: "forks" as const };

export default defineConfig({
  test: {
    ...shared,
    projects: [
      { test: { ...shared, name: "fast", include: ["test/**/*.test.ts"], exclude: FULL_ONLY } },
      {
        test: {
          ...shared,
          name: "full-only",
          include: FULL_ONLY.map((g) => (g.endsWith("/**") ? `${g}/*.test.ts` : g)),
        },
      },
    ],
  },
});
