import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { settlementSchema } from "../../src/http/settlement-api-schemas.js";

// The settlement item's fields as the docs spell them must be the answer's (the strict schema the
// HTTP tests hold the answer to): the docs once named `kind` and `amendment` that the HTTP answer
// did not carry, and no test compared the two.
const ROOT = join(import.meta.dirname, "..", "..");
const answerKeys = Object.keys(settlementSchema.shape);

describe("the settlement item in the docs", () => {
  it.each([
    ["docs/http-api.md", /`\{items: \[\{(cursor[^}]*)\}\.\.\.\], cursor\}`/],
    ["docs/effects.md", /`\{"items": \[\{("cursor"[^}]*)\}\], "cursor"\}`/],
  ])("%s lists the answer's fields, in its order", (file, pattern) => {
    const text = readFileSync(join(ROOT, file), "utf8");
    const listed = pattern.exec(text)?.[1];
    expect(listed, `no settlement item in ${file}`).toBeDefined();
    expect(listed!.split(",").map((name) => name.trim().replaceAll('"', ""))).toEqual(answerKeys);
  });
});
