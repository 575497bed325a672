import { describe, expect, it } from "vitest";
import { isFinalityError } from "../../../src/core/errors.js";
import { intentStatus } from "../../../src/core/intent-model.js";
import type { IntentInput } from "../../../src/core/validation.js";
import type { EffectDefinition } from "../../../src/engine/effect-definitions.js";
import { type IngestContext, ingestInTx } from "../../../src/engine/ingest.js";
import { attachIntentInTx, flagOrphanedInTx, recordIntentInTx } from "../../../src/engine/intents.js";
import type { Store } from "../../../src/store/store.js";
import { T0 } from "../../helpers/records.js";
import type { ContractScope } from "./harness.js";

const TIMEOUT_MS = 900_000;
let ids = 0;

const effects: EffectDefinition[] = [
  { name: "renders", on: ["succeeded"], kinds: ["render"], handler: async () => {} },
  { name: "orphans", on: ["orphaned"], handler: async () => {} },
];

function context(now: number): IngestContext {
  return {
    now,
    unknownJobs: "adopt",
    effects,
    newId: () => `intent-${++ids}`,
    firstCheckAt: () => now + 90_000,
  };
}

const input: IntentInput = { provider: "acme", key: "order-17", kind: "render", metadata: { b: 2, a: [1] } };

const record = (store: Store, what: IntentInput = input, now = T0) =>
  store.transaction((tx) =>
    recordIntentInTx(tx, what, { now, timeoutMs: TIMEOUT_MS, newId: () => `k${++ids}` }),
  );
const attach = (store: Store, key: string, id: string, now = T0 + 1000) =>
  store.transaction((tx) => attachIntentInTx(tx, key, id, "api", context(now)));
const flag = (store: Store, now: number) =>
  store.transaction((tx) => flagOrphanedInTx(tx, context(now), 100));

async function refusal(work: Promise<unknown>): Promise<string> {
  try {
    await work;
  } catch (error) {
    if (isFinalityError(error)) return error.code;
    throw error;
  }
  throw new Error("expected a refusal");
}

/** Submission intents and discovery cursors: the same semantics on every store. */
export function describeIntents(scope: ContractScope): void {
  describe("intents", () => {
    it("records an intent once: the same body again is the same intent, another body is a conflict", async () => {
      const store = scope.store();
      const first = await record(store);
      expect(first.created).toBe(true);
      expect(intentStatus(first.intent)).toBe("open");
      expect(first.intent.deadlineAt).toBe(T0 + TIMEOUT_MS);
      expect(await store.getIntent("order-17")).toEqual(first.intent);
      // Same meaning, keys in another order: the same intent, not a second one.
      const again = await record(store, { ...input, metadata: { a: [1], b: 2 } }, T0 + 5);
      expect(again).toEqual({ created: false, intent: first.intent });
      expect(await refusal(record(store, { ...input, kind: "other" }))).toBe("conflict");
      expect(await refusal(record(store, { ...input, metadata: { a: [2], b: 2 } }))).toBe("conflict");
      expect(await store.getIntent("order-17")).toEqual(first.intent);
    });

    it("attaches the remote id: the job is registered with the intent's kind and metadata, once", async () => {
      const store = scope.store();
      await record(store);
      const attached = await attach(store, "order-17", "job-9");
      expect(attached.attached).toBe(true);
      expect(attached.intent).toMatchObject({ jobId: "job-9", attachedAt: T0 + 1000, attachedBy: "api" });
      expect(attached.job).toMatchObject({ provider: "acme", id: "job-9", kind: "render", registered: true });
      expect(attached.job.metadata).toEqual({ b: 2, a: [1] });
      const events = await store.jobEvents({ provider: "acme", id: "job-9" });
      expect(events.map((e) => e.source)).toEqual(["intent"]);
      // Idempotent: the same id again changes nothing; another id is refused.
      const again = await attach(store, "order-17", "job-9", T0 + 2000);
      expect(again.attached).toBe(false);
      expect(again.intent).toEqual(attached.intent);
      expect(await store.jobEvents({ provider: "acme", id: "job-9" })).toHaveLength(1);
      expect(await refusal(attach(store, "order-17", "job-10"))).toBe("conflict");
      expect(await refusal(attach(store, "no-such-intent", "job-10"))).toBe("not-found");
      expect(await store.getJob({ provider: "acme", id: "job-10" })).toBeNull();
    });

    it("a job a webhook adopted first merges with the attach: its events and state kept, the kind added", async () => {
      const store = scope.store();
      await record(store);
      const key = { provider: "acme", id: "job-9" };
      await store.transaction((tx) =>
        ingestInTx(
          tx,
          { ...key, state: "succeeded", source: "webhook", deliveryId: "d1" },
          context(T0 + 500),
        ),
      );
      const adopted = await store.getJob(key);
      expect(adopted).toMatchObject({ state: "succeeded", kind: null, registered: false });
      const attached = await attach(store, "order-17", "job-9");
      expect(attached.job).toMatchObject({ state: "succeeded", kind: "render", registered: true });
      expect(attached.job.settledAt).toBe(adopted?.settledAt);
      // The effect limited to the kind fires now, once; the webhook's event stays first.
      expect(attached.effects).toEqual(["renders"]);
      const events = await store.jobEvents(key);
      expect(events.map((e) => `${e.source}:${e.state}`)).toEqual(["webhook:succeeded", "intent:pending"]);
      await attach(store, "order-17", "job-9", T0 + 3000);
      const rows = await store.listEffects({ provider: "acme", jobId: "job-9" });
      expect(rows.items.map((e) => e.name)).toEqual(["renders"]);
      const page = await store.listJobs({ provider: "acme" });
      expect(page.items.map((j) => j.id)).toEqual(["job-9"]);
    });

    it("an open intent past its deadline is flagged orphaned once, with one outbox row", async () => {
      const store = scope.store();
      await record(store);
      await record(store, { provider: "acme", key: "later" }, T0 + 60_000);
      expect((await flag(store, T0 + TIMEOUT_MS - 1)).flagged).toEqual([]);
      const first = await flag(store, T0 + TIMEOUT_MS);
      expect(first.flagged.map((i) => i.key)).toEqual(["order-17"]);
      expect(first.effects).toEqual(["orphans"]);
      expect((await flag(store, T0 + TIMEOUT_MS + 5)).flagged).toEqual([]);
      const orphan = await store.getIntent("order-17");
      expect(orphan && intentStatus(orphan)).toBe("orphaned");
      expect(orphan?.orphanedAt).toBe(T0 + TIMEOUT_MS);
      expect(await store.countOrphanedIntents()).toBe(1);
      const rows = await store.listEffects({ provider: "acme", jobId: "order-17" });
      expect(rows.items.map((e) => `${e.name}:${e.trigger}`)).toEqual(["orphans:orphaned"]);
      expect((await store.listIntents({ status: "orphaned" })).map((i) => i.key)).toEqual(["order-17"]);
      expect((await store.listIntents({ status: "open" })).map((i) => i.key)).toEqual(["later"]);
      // A late attach still works: the intent is attached, the orphan flag stays as a record.
      const late = await attach(store, "order-17", "job-9", T0 + TIMEOUT_MS + 10);
      expect(intentStatus(late.intent)).toBe("attached");
      expect(late.intent.orphanedAt).toBe(T0 + TIMEOUT_MS);
      expect(await store.countOrphanedIntents()).toBe(0);
      expect((await flag(store, T0 + 10 * TIMEOUT_MS)).flagged.map((i) => i.key)).toEqual(["later"]);
    });

    it("keeps a discovery cursor per provider instance, across a reopen", async () => {
      const store = scope.store();
      expect(await store.getDiscoveryCursor("acme")).toBeNull();
      await store.transaction((tx) => tx.setDiscoveryCursor("acme", "page-3", T0));
      await store.transaction((tx) => tx.setDiscoveryCursor("other", "x", T0));
      await store.transaction((tx) => tx.setDiscoveryCursor("acme", "page-4", T0 + 1));
      expect(await store.getDiscoveryCursor("acme")).toBe("page-4");
      expect(await store.getDiscoveryCursor("other")).toBe("x");
      const reopen = scope.fixture().reopen;
      if (reopen === undefined) return;
      await store.close();
      const again = scope.track(await reopen());
      expect(await again.getDiscoveryCursor("acme")).toBe("page-4");
    });
  });
}
