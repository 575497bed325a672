import { describe, expect, it } from "vitest";
import { postgresSuite, useFreshSchema } from "../helpers/postgres.js";
import { T0 } from "../helpers/records.js";
import { makeRun } from "./contract/runs.js";

// Claims shared by replicas on PostgreSQL (round trips and the pick order are in the store
// contract, test/store/contract/runs.ts, for every store).
const { admin } = await postgresSuite("PostgreSQL runs store");

describe("PostgreSQL runs store", () => {
  const { open } = useFreshSchema(admin);

  it("replicas claiming at the same moment skip each other's locked run", async () => {
    const [a, b] = [await open(), await open()];
    await a.transaction(async (tx) => {
      for (let i = 0; i < 3; i++) await tx.insertRun(makeRun(`run-${i}`));
    });
    let release: () => void = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let picked: () => void = () => {};
    const firstPicked = new Promise<void>((resolve) => {
      picked = resolve;
    });
    // The first claim holds its transaction open until the second has picked.
    const first = a.transaction(async (tx) => {
      const run = await tx.pickClaimableRun(null, T0);
      picked();
      await held;
      await tx.updateRun({ ...run!, status: "dispatching", version: run!.version + 1 }, run!.version);
      return run!.id;
    });
    await firstPicked;
    const second = await b.transaction(async (tx) => {
      const run = await tx.pickClaimableRun(null, T0);
      await tx.updateRun({ ...run!, status: "dispatching", version: run!.version + 1 }, run!.version);
      return run!.id;
    });
    release();
    expect([await first, second]).toEqual(["run-0", "run-1"]);
    expect(await a.runStats()).toEqual({ dispatching: 2, queued: 1 });
  });
});
