import { fileURLToPath } from "node:url";
import { Miniflare } from "miniflare";
import { afterAll, describe, expect, it } from "vitest";
import { requireWorkerd } from "../helpers/services.js";
import { bundleWorker } from "./helpers/bundle.js";

// The store contract runs inside workerd (Miniflare), against a Durable Object's own SQLite: the
// suite is bundled into a Worker with "vitest" swapped for a shim that keeps vitest's `expect`.
requireWorkerd();
const script = await bundleWorker(new URL("./contract-worker/worker.ts", import.meta.url), {
  vitest: fileURLToPath(new URL("./contract-worker/vitest-shim.ts", import.meta.url)),
});
const mf = new Miniflare({
  modules: true,
  script,
  compatibilityDate: "2025-09-01",
  durableObjects: { CONTRACT: { className: "ContractObject", useSQLite: true } },
});
const names = (await (await mf.dispatchFetch("http://contract/list")).json()) as string[];
afterAll(() => mf.dispose());

describe("Store contract in workerd: durable object", () => {
  it("registers the whole suite", () => {
    expect(names.length).toBeGreaterThan(30);
  });
  for (const name of names) {
    it(name.replace(/^Store contract: durable object > /, ""), async () => {
      const response = await mf.dispatchFetch(`http://contract/run?name=${encodeURIComponent(name)}`);
      const outcome = (await response.json()) as { ok: boolean; error?: string };
      if (!outcome.ok) throw new Error(outcome.error);
    });
  }
});
