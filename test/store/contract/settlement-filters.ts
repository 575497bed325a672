import { describe, expect, it } from "vitest";
import { type Random, seededRandom } from "../../../src/core/clock.js";
import type { Observation } from "../../../src/core/model.js";
import { TERMINAL_STATES } from "../../../src/core/states.js";
import { type IngestContext, ingestInTx, registerInTx } from "../../../src/engine/ingest.js";
import { attachIntentInTx, recordIntentInTx } from "../../../src/engine/intents.js";
import type { SettlementQuery } from "../../../src/store/settlement-feed.js";
import type { Store } from "../../../src/store/store.js";
import { T0 } from "../../helpers/records.js";
import type { ContractScope } from "./harness.js";

// A kind-filtered reader must see a job whose kind arrived after it settled (a webhook before the
// registration, or before the intent's attach), by that final kind, once; every other reader
// sees each settlement once, as before. The random case is the invariant over interleavings.

const PROVIDERS = ["acme", "other"] as const;
const KINDS = ["render", "text"] as const;
let ids = 0;

function context(now: number): IngestContext {
  return {
    now,
    unknownJobs: "adopt",
    effects: [],
    newId: () => `filters-${++ids}`,
    firstCheckAt: () => now + 90_000,
  };
}

const webhook = (provider: string, id: string, state: string, deliveryId: string): Observation => ({
  provider,
  id,
  state,
  source: "webhook",
  deliveryId,
});

type Step =
  | { op: "webhook"; provider: string; id: string; state: string }
  | { op: "register"; provider: string; id: string; kind?: string }
  | { op: "attach"; provider: string; id: string };

async function run(store: Store, step: Step, now: number): Promise<void> {
  const ctx = context(now);
  const key = `intent-${step.provider}-${step.id}`;
  if (step.op === "webhook")
    await store.transaction((tx) =>
      ingestInTx(tx, webhook(step.provider, step.id, step.state, `d-${++ids}`), ctx),
    );
  else if (step.op === "register")
    await store.transaction((tx) =>
      registerInTx(tx, { provider: step.provider, id: step.id, kind: step.kind }, ctx),
    );
  else await store.transaction((tx) => attachIntentInTx(tx, key, step.id, "api", ctx));
}

/** One reader: a filter, its cursor, and every job it was given, in order. */
interface Reader {
  name: string;
  filter: Pick<SettlementQuery, "provider" | "kind">;
  after: string | undefined;
  seen: string[];
}

/** Reads one page (`limit`) after the reader's cursor; with `toEnd`, until a page is empty. */
async function read(store: Store, reader: Reader, limit: number, toEnd = false): Promise<void> {
  for (;;) {
    const page = await store.readSettlements({ ...reader.filter, after: reader.after, limit });
    reader.seen.push(...page.items.map((s) => `${s.provider}/${s.id}`));
    reader.after = page.cursor ?? undefined;
    if (!toEnd || page.items.length === 0) return;
  }
}

function readers(): Reader[] {
  const filters: Reader["filter"][] = [
    {},
    ...PROVIDERS.map((provider) => ({ provider })),
    ...KINDS.map((kind) => ({ kind })),
    ...PROVIDERS.flatMap((provider) => KINDS.map((kind) => ({ provider, kind }))),
  ];
  return filters.map((filter) => ({ name: JSON.stringify(filter), filter, after: undefined, seen: [] }));
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/** A random plan: each job's steps in their own order, the jobs' steps interleaved at random. */
async function plan(store: Store, random: Random, prefix: string): Promise<Step[]> {
  const perJob: Step[][] = [];
  for (let j = 0; j < 6; j++) {
    const provider = pick(random, PROVIDERS);
    const id = `${prefix}job-${j}`;
    const steps: Step[] = [];
    if (random() < 0.8) steps.push({ op: "webhook", provider, id, state: pick(random, TERMINAL_STATES) });
    if (random() < 0.3) steps.push({ op: "webhook", provider, id, state: "running" });
    if (random() < 0.3) steps.push({ op: "register", provider, id });
    const kindFrom = random();
    const kind = pick(random, KINDS);
    if (kindFrom < 0.4) steps.push({ op: "register", provider, id, kind });
    else if (kindFrom < 0.8) {
      // The intent is recorded before the submission; its attach is what brings the kind.
      await store.transaction((tx) =>
        recordIntentInTx(
          tx,
          { provider, key: `intent-${provider}-${id}`, kind },
          { now: T0, timeoutMs: 900_000, newId: () => `k${++ids}` },
        ),
      );
      steps.push({ op: "attach", provider, id });
    }
    perJob.push(steps.sort(() => random() - 0.5));
  }
  const interleaved: Step[] = [];
  while (perJob.some((steps) => steps.length > 0)) {
    const open = perJob.filter((steps) => steps.length > 0);
    interleaved.push(pick(random, open).shift() as Step);
  }
  return interleaved;
}

/** What each reader must have been given: the settled jobs its filter matches by their final attributes. */
async function expected(store: Store, reader: Reader, jobs: readonly string[]): Promise<string[]> {
  const matching: string[] = [];
  for (const key of jobs) {
    const [provider = "", id = ""] = key.split("/");
    const job = await store.getJob({ provider, id });
    if (job === null || job.settledAt === null) continue;
    if (reader.filter.provider !== undefined && job.provider !== reader.filter.provider) continue;
    if (reader.filter.kind !== undefined && job.kind !== reader.filter.kind) continue;
    matching.push(key);
  }
  return matching.sort();
}

export function describeSettlementFilters(scope: ContractScope): void {
  describe("settlement feed filters", () => {
    it("a job whose kind arrives after it settled reaches the kind's readers once, and nobody else twice", async () => {
      const store = scope.store();
      const all = readers();
      await run(store, { op: "webhook", provider: "acme", id: "early", state: "succeeded" }, T0);
      for (const reader of all) await read(store, reader, 10, true);
      // Settled with no kind: the unfiltered and provider readers have it, no kind reader does.
      const byName = (name: string) => all.find((r) => r.name === name) as Reader;
      expect(byName("{}").seen).toEqual(["acme/early"]);
      expect(byName('{"kind":"render"}').seen).toEqual([]);

      await run(store, { op: "register", provider: "acme", id: "early", kind: "render" }, T0 + 1000);
      // Registered again, or with another kind: a kind is filled once, nothing more is written.
      await run(store, { op: "register", provider: "acme", id: "early", kind: "text" }, T0 + 2000);
      await run(store, { op: "register", provider: "acme", id: "early", kind: "render" }, T0 + 3000);
      for (const reader of all) await read(store, reader, 10, true);
      expect(byName("{}").seen).toEqual(["acme/early"]);
      expect(byName('{"provider":"acme"}').seen).toEqual(["acme/early"]);
      expect(byName('{"kind":"render"}').seen).toEqual(["acme/early"]);
      expect(byName('{"provider":"acme","kind":"render"}').seen).toEqual(["acme/early"]);
      expect(byName('{"kind":"text"}').seen).toEqual([]);

      // The kind reader's entry is the settlement as it was, with the kind that arrived.
      const [amended] = (await store.readSettlements({ kind: "render" })).items;
      expect(amended).toMatchObject({ kind: "render", state: "succeeded", settledAt: T0, amendment: true });
      expect(amended?.job).toMatchObject({ kind: "render" });
      const [first] = (await store.readSettlements({})).items;
      expect(first).toMatchObject({ kind: null, amendment: false });
    });

    it("for random interleavings of register, attach and webhooks, resumed from cursors mid-way, each reader sees exactly its jobs once", async () => {
      const seeds = Number(globalThis.process?.env?.FEED_FILTER_SEEDS ?? 12);
      for (let seed = 1; seed <= seeds; seed++) {
        // One store per seed would cost a schema each on PostgreSQL: the seed names its jobs instead.
        const store = scope.store();
        const random = seededRandom(seed);
        const steps = await plan(store, random, `s${seed}-`);
        const all = readers();
        const jobs = new Set<string>();
        let now = T0 + seed * 1_000_000;
        for (const step of steps) {
          await run(store, step, now);
          jobs.add(`${step.provider}/${step.id}`);
          now += 1000;
          // Some readers read a page now and carry their cursor on.
          for (const reader of all)
            if (random() < 0.3) await read(store, reader, 1 + Math.floor(random() * 3));
        }
        for (const reader of all) {
          await read(store, reader, 2, true);
          const mine = reader.seen.filter((key) => jobs.has(key));
          const want = await expected(store, reader, [...jobs]);
          expect([...mine].sort(), `seed ${seed}, reader ${reader.name}`).toEqual(want);
        }
      }
    });
  });
}
