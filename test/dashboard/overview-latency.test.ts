import { afterAll, describe, expect, it } from "vitest";
import type { Source } from "../../src/core/states.js";
import { loadOverview } from "../../src/dashboard/overview-data.js";
import { summarize } from "../../src/dashboard/overview-latency.js";
import { OverviewPage } from "../../src/dashboard/overview-page.js";
import { createFinality } from "../../src/engine/create-finality.js";
import { createDispatcher } from "../../src/engine/dispatcher.js";
import { openPostgresStore } from "../../src/store/postgres/postgres-store.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import {
  adminClient,
  dropSchema,
  POSTGRES_TEST_URL,
  requirePostgres,
  uniqueSchemaName,
} from "../helpers/postgres.js";
import { tempDir } from "../helpers/temp-dir.js";

// The overview's latency panel from stored rows, on both stores: completion (the provider's
// updateTime) to settled, and to the effect delivered, p50 and p99 over the last hour by source.

// The SQLite tests here run without PostgreSQL; the PostgreSQL ones fail without it (requirePostgres).
const admin = adminClient();
afterAll(() => admin.end({ timeout: 5 }));
const dir = tempDir("finality-latency-");
const schemas: string[] = [];
afterAll(async () => {
  dir.cleanup();
  for (const schema of schemas) await dropSchema(admin, schema);
});

const T = Date.UTC(2026, 5, 1, 12, 0, 0);
const S = 1000;

async function scenario(store: Store) {
  let now = T - 2 * 3600 * S;
  const clock = { now: () => now };
  const finality = createFinality({
    store,
    clock,
    effects: [{ name: "notify", kinds: ["k"], handler: async () => {} }],
  });
  const settle = (id: string, source: Source, updateAgoMs: number | null, kind = "k") =>
    finality.ingest({
      provider: "acme",
      id,
      state: "succeeded",
      source,
      kind,
      ...(updateAgoMs === null ? {} : { updateTime: now - updateAgoMs }),
    });
  // Two hours ago: outside the window.
  await settle("old", "webhook", 10 * S);
  now = T;
  await settle("a", "webhook", 10 * S);
  await settle("b", "webhook", 20 * S);
  await settle("c", "reconcile", 300 * S);
  await settle("untimed", "webhook", null);
  await finality.ingest({ provider: "acme", id: "open", state: "running", source: "webhook" });
  now = T + 5 * S;
  await createDispatcher(finality).runOnce();
  const data = await loadOverview(store, now, ["acme", "other"]);
  return { finality, data };
}

function expectPanel(data: Awaited<ReturnType<typeof scenario>>["data"]) {
  expect(data.latency.detection).toEqual([
    { source: "webhook", samples: 2, p50Ms: 10 * S, p99Ms: 20 * S },
    { source: "reconcile", samples: 1, p50Ms: 300 * S, p99Ms: 300 * S },
  ]);
  // "old" settled two hours ago but its effect was delivered now: it counts here, 2 h late.
  const toEffect = data.latency.completionToEffect;
  expect(toEffect.find((r) => r.source === "reconcile")).toEqual({
    source: "reconcile",
    samples: 1,
    p50Ms: 305 * S,
    p99Ms: 305 * S,
  });
  expect(toEffect.find((r) => r.source === "webhook")).toEqual({
    source: "webhook",
    samples: 3,
    p50Ms: 25 * S,
    p99Ms: 2 * 3600 * S + 15 * S,
  });
  expect(data.latency.oldestOpen).toEqual({ acme: T });
  const html = String(OverviewPage({ data }));
  expect(html).toContain("Latency, last hour");
  expect(html).toMatch(
    /data-latency-source="reconcile"><td>reconcile<\/td><td class="num">1<\/td><td class="num">5\.0 min<\/td>/,
  );
  expect(html).toMatch(/data-oldest-open="acme"><td>acme<\/td><td class="num">5 s<\/td>/);
}

describe("latency over the last hour", () => {
  it("SQLite", async () => {
    const { finality, data } = await scenario(createSqliteStore({ path: dir.file("ledger.db") }));
    try {
      expectPanel(data);
    } finally {
      await finality.close();
    }
  });

  it("PostgreSQL", async () => {
    await requirePostgres("latency reads on PostgreSQL");
    const schema = uniqueSchemaName("finality_latency");
    schemas.push(schema);
    const { finality, data } = await scenario(
      await openPostgresStore({ url: POSTGRES_TEST_URL, schema, max: 2 }),
    );
    try {
      expectPanel(data);
    } finally {
      await finality.close();
    }
  });

  it("summarize: nearest-rank p50 and p99, sources in a fixed order", () => {
    const samples = Array.from({ length: 100 }, (_, i) => ({ source: "reconcile", ms: (100 - i) * S }));
    expect(summarize([...samples, { source: "webhook", ms: 7 }, { source: "api", ms: 1 }])).toEqual([
      { source: "webhook", samples: 1, p50Ms: 7, p99Ms: 7 },
      { source: "reconcile", samples: 100, p50Ms: 50 * S, p99Ms: 99 * S },
      { source: "api", samples: 1, p50Ms: 1, p99Ms: 1 },
    ]);
  });
});
