import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { checkImports, compareWithKnown, readKnown } from "../../scripts/check-imports.mjs";
import { tempDir } from "../helpers/temp-dir.js";

// scripts/check-imports.mjs, which `npm test` runs: unused exports and file-level import cycles.

const ROOT = resolve(import.meta.dirname, "../..");

describe("the unused-export and import-cycle check", () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  const put = (path: string, text: string) => {
    const file = join(dir.path, path);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  };

  it("finds an export nobody imports and a cycle; an entry's, a test's and a re-export's names are used", () => {
    put("package.json", JSON.stringify({ exports: { ".": { default: "./dist/index.js" } } }));
    put("src/index.ts", 'export { pub } from "./a.js";\nexport * from "./all.js";\n');
    put(
      "src/a.ts",
      'import { ringB } from "./b.js";\nexport type Shape = { n: number };\nexport function pub(s: Shape) { return ringB(s.n); }\nexport function forgotten() {}\n',
    );
    put("src/all.ts", "export const everything = 1;\n");
    put("src/b.ts", 'import { ringC } from "./c.js";\nexport const ringB = (n: number) => ringC(n);\n');
    put(
      "src/c.ts",
      'import type { ringB } from "./b.js";\nexport const ringC = (n: number): ReturnType<typeof ringB> => n;\n',
    );
    put("src/helper.ts", "export const forTests = 2;\n");
    put("test/helper.test.ts", 'import { forTests } from "../src/helper.js";\nvoid forTests;\n');
    expect(checkImports(dir.path)).toEqual([
      "import cycle: src/b.ts ↔ src/c.ts",
      "unused export: src/a.ts: Shape (no file imports it; drop `export`, or the code)",
      "unused export: src/a.ts: forgotten (no file imports it; drop `export`, or the code)",
    ]);
  });

  it("holds the repository to its list of known findings: nothing new, nothing fixed and still listed", () => {
    const findings = checkImports(ROOT);
    expect(compareWithKnown(findings, readKnown(ROOT))).toEqual({ added: [], gone: [] });
    // What issue 30 named is fixed, not listed.
    const named = [
      "webhook-routes.ts ↔",
      "allShardNames",
      "setActiveSpanAttribute",
      "changesLease",
      "bucketStart",
    ];
    for (const name of named) expect(findings.filter((line) => line.includes(name))).toEqual([]);
  });

  it("compares against the known list both ways", () => {
    expect(compareWithKnown(["a", "new"], ["a", "fixed"])).toEqual({ added: ["new"], gone: ["fixed"] });
  });
});
