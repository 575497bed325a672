import { afterEach, describe, expect, it } from "vitest";
import { openPostgresStore, type PostgresStore } from "../../src/store/postgres/postgres-store.js";
import { jobLockOrder } from "../../src/store/store.js";
import { dropSchema, POSTGRES_TEST_URL, postgresSuite, uniqueSchemaName } from "../helpers/postgres.js";
import { makeJob } from "../helpers/records.js";

// The settlement feed's cursor on PostgreSQL under concurrent commits (migrations 0007, 0016): many
// connections on several replicas settle jobs with random delays inside their transactions, some
// through the group commit, some roll back; a reader polling all the while must see every
// committed settlement exactly once, in cursor order, and never one that rolled back.
const { admin } = await postgresSuite("PostgreSQL settlement order");

interface Seen {
  numbers: number[];
  ids: string[];
}

/** Polls the feed from its start until `done()` and the feed has nothing newer. */
async function pollFeed(
  reader: PostgresStore,
  done: () => boolean,
  onSeen: (count: number) => void,
): Promise<Seen> {
  const seen: Seen = { numbers: [], ids: [] };
  let after: string | undefined;
  for (;;) {
    const finished = done();
    const page = await reader.readSettlements({ after, limit: 7 });
    for (const item of page.items) {
      seen.numbers.push(Number(atob(item.cursor.replace(/-/g, "+").replace(/_/g, "/"))));
      seen.ids.push(item.id);
    }
    onSeen(seen.ids.length);
    after = page.cursor ?? undefined;
    if (finished && page.items.length === 0) return seen;
  }
}

/**
 * Settles `count` jobs from `writers` at once, each holding its transaction open a random while;
 * the first holds its own open until `holdFirst` resolves.
 */
async function settleConcurrently(
  writers: PostgresStore[],
  count: number,
  prefix: string,
  holdFirst: Promise<void>,
) {
  const committed: string[] = [];
  let next = 0;
  // The others start once the first has inserted its row: on a busy machine its group could
  // otherwise start after ten others had committed, and a sequence numbered at insert would then
  // give it no lower number than what the reader had seen (the naive design's test needs that).
  let firstInserted = () => {};
  const firstIn = new Promise<void>((resolve) => {
    firstInserted = resolve;
  });
  async function writer(store: PostgresStore, lane: number): Promise<void> {
    while (next < count) {
      const n = next++;
      const id = `${prefix}-${n}`;
      const rollBack = n % 9 === 4;
      const delayMs = Math.floor(Math.random() * 25);
      const grouped = lane % 2 === 0;
      if (n !== 0) await firstIn;
      try {
        await store.transaction(
          async (tx) => {
            await tx.insertJob(makeJob({ id, state: "succeeded" }));
            if (n === 0) firstInserted();
            await tx.execute("SELECT pg_sleep($1::float8 / 1000)", [delayMs]);
            // The first one stays open until the reader has seen later settlements, so that rows
            // inserted after it surely commit, and are read, before it commits.
            if (n === 0) await holdFirst;
            if (rollBack) throw new Error("rolled back on purpose");
          },
          grouped ? { lockOrder: jobLockOrder({ provider: "generic", id }) } : undefined,
        );
        committed.push(id);
      } catch (error) {
        if (!rollBack) throw error;
      } finally {
        if (n === 0) firstInserted(); // had its insert failed, the others must not wait for ever
      }
    }
  }
  await Promise.all(
    writers.flatMap((store, r) => [0, 1, 2, 3, 4].map((lane) => writer(store, r * 5 + lane))),
  );
  return committed;
}

describe("PostgreSQL settlement feed order", () => {
  let schema = "";
  let stores: PostgresStore[] = [];
  const open = async () => {
    const store = await openPostgresStore({ url: POSTGRES_TEST_URL, schema, max: 6 });
    stores.push(store);
    return store;
  };
  afterEach(async () => {
    for (const store of stores) await store.close();
    stores = [];
    await dropSchema(admin, schema);
  });

  async function race(prefix: string) {
    const writers = [await open(), await open(), await open()];
    const reader = await open();
    let writing = true;
    let readEnough = () => {};
    const holdFirst = new Promise<void>((resolve) => {
      readEnough = resolve;
    });
    const polling = pollFeed(
      reader,
      () => !writing,
      (count) => {
        if (count >= 10) readEnough();
      },
    );
    const committed = await settleConcurrently(writers, 240, prefix, holdFirst).finally(() => {
      writing = false;
    });
    // The race went through the group commit too, not only through transactions of their own.
    expect(writers.reduce((n, store) => n + store.groupCommitStats().batches, 0)).toBeGreaterThan(0);
    return { committed, seen: await polling, reader };
  }

  it("a polling reader sees every committed settlement once, in cursor order, none that rolled back", async () => {
    schema = uniqueSchemaName("finality_settle_order");
    const { committed, seen, reader } = await race("job");
    expect(committed.length).toBeGreaterThan(200);
    // Strictly increasing cursors: nothing twice, nothing out of order.
    for (let i = 1; i < seen.numbers.length; i++)
      expect(seen.numbers[i]).toBeGreaterThan(seen.numbers[i - 1] ?? 0);
    expect([...seen.ids].sort()).toEqual([...committed].sort());
    // What a fresh reader finds afterwards is what the live one saw, in the same order.
    const all: string[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await reader.readSettlements({ after, limit: 1000 });
      if (page.items.length === 0) break;
      all.push(...page.items.map((s) => s.id));
      after = page.cursor ?? undefined;
    }
    expect(all).toEqual(seen.ids);
  }, 120_000);

  it("the same race catches a sequence numbered at insert (the naive design): rows committed late are skipped", async () => {
    schema = uniqueSchemaName("finality_settle_naive");
    const first = await open();
    // The mutant: number each row when it is inserted, and make the reader's numbering step
    // (migration 0016) number nothing.
    await first.transaction(async (tx) => {
      await tx.execute(
        `CREATE OR REPLACE FUNCTION settlement_recorded() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN
           INSERT INTO settlements (settlement_no, provider, job_id, kind, state, settled_at, settled_by)
             VALUES (nextval('settlement_numbers'), NEW.provider, NEW.id, NEW.kind, NEW.state, NEW.settled_at, NEW.settled_by);
           RETURN NULL;
         END $$`,
      );
      await tx.execute(
        `CREATE OR REPLACE FUNCTION finality_number_settlements() RETURNS bigint LANGUAGE sql AS $$
           SELECT coalesce(max(settlement_no), 0) FROM settlements $$`,
      );
    });
    const { committed, seen } = await race("naive");
    const missed = committed.filter((id) => !seen.ids.includes(id));
    expect(missed.length).toBeGreaterThan(0);
    expect(missed).toContain("naive-0");
  }, 120_000);
});
