import { describe, expect, it } from "vitest";
import { loadOnce } from "../../src/core/load-once.js";

// The modules `serve` imports on first use (the dashboard's pages, jose, the AWS signer) go
// through loadOnce: concurrent first users must share one load, and a failed load must not stick.

describe("loadOnce", () => {
  it("loads once for concurrent first callers and for every caller after them", async () => {
    let loads = 0;
    let finish: (value: string) => void = () => {};
    const load = loadOnce(() => {
      loads += 1;
      return new Promise<string>((resolve) => {
        finish = resolve;
      });
    });
    const first = [load(), load(), load()];
    finish("module");
    expect(await Promise.all(first)).toEqual(["module", "module", "module"]);
    expect(await load()).toBe("module");
    expect(loads).toBe(1);
  });

  it("gives a failed load's error to its callers, and tries again on the next call", async () => {
    let loads = 0;
    const load = loadOnce(async () => {
      loads += 1;
      if (loads === 1) throw new Error("not now");
      return loads;
    });
    const failed = [load(), load()];
    await expect(failed[0]).rejects.toThrow("not now");
    await expect(failed[1]).rejects.toThrow("not now");
    expect(await load()).toBe(2);
    expect(await load()).toBe(2);
    expect(loads).toBe(2);
  });
});
