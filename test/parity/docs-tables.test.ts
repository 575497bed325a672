import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { FAULT_SCENARIOS, SCENARIOS, START_SCENARIOS } from "./scenario-list.js";

// docs/cloudflare-workers.md's feature table and docs/postgresql.md's parity table name, per row,
// the scenario of this suite that proves it: every name must be a scenario that exists, and a row
// the suite does not cover must say so in words ("not in the suite: why").

const KNOWN = new Set([
  ...[...SCENARIOS, ...START_SCENARIOS].map((s) => s.name),
  ...Object.values(FAULT_SCENARIOS),
]);

function scenarioCells(doc: string, header: string): { row: string; cell: string }[] {
  const text = readFileSync(new URL(`../../docs/${doc}`, import.meta.url), "utf8");
  const lines = text.split("\n");
  const start = lines.findIndex((l) => l.startsWith("|") && l.includes(header));
  if (start < 0) throw new Error(`${doc}: no table with a "${header}" column`);
  const column = lines[start]?.split("|").findIndex((c) => c.includes(header)) ?? -1;
  const rows: { row: string; cell: string }[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith("|")) break;
    const cells = line.split(" | ").map((c) => c.replace(/^\| ?| ?\|$/g, ""));
    rows.push({ row: cells[0] ?? "", cell: cells[column - 1] ?? "" });
  }
  return rows;
}

describe.each([
  ["cloudflare-workers.md", "Parity scenario"],
  ["postgresql.md", "Parity scenario"],
])("%s names a parity scenario per row", (doc, header) => {
  it("every row names existing scenarios, or says why the suite does not cover it", () => {
    const rows = scenarioCells(doc, header);
    expect(rows.length).toBeGreaterThan(5);
    for (const { row, cell } of rows) {
      const named = [...cell.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1] as string);
      if (cell.startsWith("not in the suite: ")) {
        expect(cell.length, row).toBeGreaterThan("not in the suite: ".length + 5);
        continue;
      }
      expect(named, `${doc}: "${row}" names no scenario`).not.toEqual([]);
      for (const name of named) expect(KNOWN.has(name), `${doc}: "${row}" names "${name}"`).toBe(true);
    }
  });
});
