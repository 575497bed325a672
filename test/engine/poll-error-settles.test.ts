import { describe, expect, it } from "vitest";
import { createFinality } from "../../src/engine/create-finality.js";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import type { Store } from "../../src/store/store.js";
import { engineOf } from "../helpers/engine.js";
import { postgresSuite, useFreshSchema } from "../helpers/postgres.js";

// Issue #33.13: a poll error stayed on a job after the job settled, so `jobs show`, the API and the
// dashboard said its polls still failed. Settling clears it, on every store.

const { admin } = await postgresSuite("a poll error cleared when the job settles");

async function settleAfterFailedPoll(store: Store): Promise<void> {
  const finality = createFinality({ store });
  const key = { provider: "generic", id: "job-polled" };
  await finality.register(key);
  // As the reconciler's bookkeeping writes a failed poll (engine/reconcile-tx.ts).
  const registered = await finality.getJob(key);
  if (registered === null) throw new Error("not registered");
  const failing = {
    ...registered,
    version: registered.version + 1,
    lastPollError: {
      at: registered.submittedAt,
      message: "status API answered 503",
      url: null,
      code: null,
      status: 503,
    },
  };
  expect(await store.transaction((tx) => tx.updateJob(failing, registered.version))).toBe(true);
  expect((await finality.getJob(key))?.lastPollError).toMatchObject({ status: 503 });

  const outcome = await engineOf(finality).ingestTrusted({ ...key, state: "succeeded", source: "webhook" });
  expect(outcome).toMatchObject({ applied: true, settled: true });
  expect(await finality.getJob(key)).toMatchObject({ state: "succeeded", lastPollError: null });
  await finality.close();
}

describe("a job's poll error is cleared when it settles", () => {
  it("SQLite", async () => {
    await settleAfterFailedPoll(createSqliteStore({ path: ":memory:" }));
  });

  describe("PostgreSQL", () => {
    const fresh = useFreshSchema(admin);
    it("on a fresh schema", async () => {
      await settleAfterFailedPoll(await fresh.open());
    });
  });
});
