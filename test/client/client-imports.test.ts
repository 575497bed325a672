import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

// `finality/client` has no runtime dependency (node:http on Node is imported by a specifier
// bundlers leave alone, test/client/node-send.test.ts): whatever src/client/ imports from
// outside itself (the server's zod schemas, for their types) is imported as a type only, which
// the compiler erases.

const CLIENT = resolve(import.meta.dirname, "../../src/client");

/** Each import statement of `text` that names a module outside src/client/ without `import type`. */
function runtimeImportsOutside(text: string): string[] {
  const statements = [...text.matchAll(/^(import|export)\b[^;]*?from\s+"([^"]+)";/gms)];
  return statements
    .filter(([statement, , from]) => {
      const outside = !(from as string).startsWith("./");
      const typeOnly = /^(import|export)\s+type\b/.test(statement as string);
      return outside && !typeOnly;
    })
    .map(([statement]) => (statement as string).replace(/\s+/g, " "));
}

describe("the client's imports", () => {
  const files = readdirSync(CLIENT).filter((name) => name.endsWith(".ts"));

  it("are type-only for anything outside src/client/", () => {
    expect(files.length).toBeGreaterThan(2);
    for (const file of files) {
      expect(runtimeImportsOutside(readFileSync(join(CLIENT, file), "utf8")), file).toEqual([]);
    }
  });

  it("the check finds a runtime import (it can fail)", () => {
    expect(runtimeImportsOutside('import { z } from "zod";\nimport type { X } from "../http/a.js";')).toEqual(
      ['import { z } from "zod";'],
    );
    expect(runtimeImportsOutside('import {\n  jobSchema,\n} from "../http/api-schemas.js";')).toHaveLength(1);
  });
});
