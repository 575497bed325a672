import { describe, expect, it } from "vitest";
import { inSendingOrder } from "../../src/core/in-sending-order.js";

describe("inSendingOrder", () => {
  it("answers the values in order, as Promise.all does", async () => {
    expect(await inSendingOrder([Promise.resolve(1), "two", Promise.resolve(null)])).toEqual([
      1,
      "two",
      null,
    ]);
  });

  it("throws the first failure in the order given, though a later one was rejected first", async () => {
    const cause = new Error("FNL01: the run was inserted concurrently");
    const collateral = new Error("25P02: current transaction is aborted");
    let failCause: (error: Error) => void = () => {};
    const first = new Promise((_, reject) => {
      failCause = reject;
    });
    const answer = inSendingOrder([first, Promise.reject(collateral)]);
    // The collateral is rejected first (Promise.all would throw it); the cause comes after.
    await new Promise((resolve) => setImmediate(resolve));
    failCause(cause);
    await expect(answer).rejects.toBe(cause);
  });
});
