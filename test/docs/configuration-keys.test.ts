import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { configSchema } from "../../src/config/config-schema.js";
import { providerSchema } from "../../src/config/provider-config-schema.js";
import { proseOf, ROOT, read } from "./markdown.js";
import { uniqueSchemaKeys } from "./schema-keys.js";

/** The keys named in the first column of docs/configuration.md's tables. */
function documentedKeys(): Set<string> {
  const keys = new Set<string>();
  for (const line of proseOf(read(join(ROOT, "docs/configuration.md"))).split("\n")) {
    const firstCell = /^\|([^|]*)\|/.exec(line)?.[1] ?? "";
    for (const code of firstCell.matchAll(/`([^`]+)`/g)) keys.add(code[1] ?? "");
  }
  return keys;
}

/** A key that only groups others (`server`, `providers.<name>.webhook`) needs no row of its own. */
function leafKeys(keys: string[]): string[] {
  return keys.filter(
    (key) => !keys.some((other) => other.startsWith(`${key}.`) || other.startsWith(`${key}[]`)),
  );
}

describe("docs/configuration.md", () => {
  it("has a row for every key of the configuration schema", () => {
    const documented = documentedKeys();
    const missing = leafKeys(uniqueSchemaKeys(configSchema)).filter((key) => !documented.has(key));
    expect(
      missing,
      `keys in src/config/config-schema.ts with no row in docs/configuration.md: ${missing.join(", ")}`,
    ).toEqual([]);
  });

  it("has a row for every key of every provider type", () => {
    const documented = documentedKeys();
    const providerKeys = leafKeys(uniqueSchemaKeys(providerSchema)).map((key) => `providers.<name>.${key}`);
    const missing = providerKeys.filter((key) => !documented.has(key));
    expect(
      missing,
      `keys in src/config/provider-config-schema.ts with no row in docs/configuration.md: ${missing.join(", ")}`,
    ).toEqual([]);
  });

  it("finds nested keys of objects, records, arrays, unions, defaults and pipes", () => {
    const schema = z.strictObject({
      a: z.strictObject({ b: z.number().default(1) }).default({ b: 1 }),
      list: z.array(z.looseObject({ c: z.string() })),
      named: z.record(z.string(), z.strictObject({ d: z.string().optional() })),
      either: z.union([z.strictObject({ e: z.string() }), z.strictObject({ f: z.string() })]),
      piped: z.looseObject({}).pipe(z.strictObject({ g: z.string() })),
    });
    expect(leafKeys(uniqueSchemaKeys(schema))).toEqual([
      "a.b",
      "list[].c",
      "named.<name>.d",
      "either.e",
      "either.f",
      "piped.g",
    ]);
  });

  it("names no key the schema does not have (a renamed key leaves no stale row)", () => {
    const known = new Set([
      ...uniqueSchemaKeys(configSchema),
      ...uniqueSchemaKeys(providerSchema).map((key) => `providers.<name>.${key}`),
    ]);
    const stale = [...documentedKeys()].filter(
      (key) => /^[$a-z][\w.<>[\]$]*$/i.test(key) && key.includes(".") && !known.has(key),
    );
    expect(
      stale,
      `rows in docs/configuration.md for keys the schema does not have: ${stale.join(", ")}`,
    ).toEqual([]);
  });
});
