import { afterAll, describe, expect, it } from "vitest";
import { createFinality } from "../../src/exports/sqlite.js";
import type { ObservationInput, RegistrationInput } from "../../src/index.js";
import { tempDir } from "../helpers/temp-dir.js";

// `ingest` and `register` take their input types, so a library user's typo is a compile error
// (`npm test` runs tsc over test/): each `@ts-expect-error` below fails the typecheck if the
// parameter goes back to `unknown`. At run time the same values are refused, changing nothing.

describe("the front door's types", () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  it("accept what the ledger takes and refuse, at compile time, what it would refuse", async () => {
    const finality = createFinality({ store: { sqlite: dir.file("ledger.db") } });
    try {
      const key = { provider: "acme", id: "j1" };
      const registration: RegistrationInput = { ...key, kind: "batch" };
      expect(await finality.register(registration)).toMatchObject({ created: true });
      const observation: ObservationInput = { ...key, state: "running", source: "webhook" };
      expect(await finality.ingest(observation)).toMatchObject({ applied: true });

      // @ts-expect-error: "email" is not a source
      const badSource = finality.ingest({ ...key, state: "succeeded", source: "email" });
      await expect(badSource).rejects.toMatchObject({ code: "invalid-observation" });
      // @ts-expect-error: no state
      const noState = finality.ingest({ ...key, source: "webhook" });
      await expect(noState).rejects.toMatchObject({ code: "invalid-observation" });
      // @ts-expect-error: "kidn" for "kind"
      const typo = finality.register({ provider: "acme", id: "j2", kidn: "batch" });
      await expect(typo).rejects.toMatchObject({ code: "invalid-request" });

      expect(await finality.getJob(key)).toMatchObject({ state: "running" });
      expect(await finality.getJob({ provider: "acme", id: "j2" })).toBeNull();
    } finally {
      await finality.close();
    }
  });
});
