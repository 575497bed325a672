import { describe, expect, it } from "vitest";
import { T0 } from "../../helpers/records.js";
import type { ContractScope } from "./harness.js";

export function describeHousekeeping(scope: ContractScope): void {
  describe("prune", () => {
    it("deletes the oldest rows before the cutoff in batches of `limit`, whatever the store binds per statement", async () => {
      const store = scope.store();
      // Two-column keys (provider, delivery id): 240 rows are 480 bound values in one batch.
      await store.transaction(async (tx) => {
        for (let i = 0; i < 300; i++) await tx.recordDelivery("acme", `old-${i}`, T0 - 1000 + i);
        for (let i = 0; i < 5; i++) await tx.recordDelivery("acme", `new-${i}`, T0 + i);
      });
      expect(await store.countPrunable("deliveries", T0)).toBe(300);
      expect(await store.prune("deliveries", T0, 240)).toBe(240);
      expect(await store.prune("deliveries", T0, 240)).toBe(60);
      expect(await store.prune("deliveries", T0, 240)).toBe(0);
      expect(await store.countPrunable("deliveries", T0 + 100)).toBe(5);
      // A pruned delivery id is new again; a kept one is still a redelivery.
      const again = await store.transaction(async (tx) => [
        await tx.recordDelivery("acme", "old-0", T0 + 10),
        await tx.recordDelivery("acme", "new-0", T0 + 10),
      ]);
      expect(again).toEqual([true, false]);
    });

    it("hasDelivery tells a recorded delivery id from a new one, per provider", async () => {
      const store = scope.store();
      await store.transaction((tx) => tx.recordDelivery("acme", "d-1", T0));
      expect(await store.hasDelivery("acme", "d-1")).toBe(true);
      expect(await store.hasDelivery("acme", "d-2")).toBe(false);
      expect(await store.hasDelivery("other", "d-1")).toBe(false);
    });
  });
}
