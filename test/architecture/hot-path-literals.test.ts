import { readFileSync } from "node:fs";
import ts from "typescript";
import { describe, expect, it } from "vitest";

// In Node 20's V8 each key written after a spread in an object literal is defined through the
// runtime, and a key the spread object lacks makes a new hidden class every time: ~1.2 µs a
// literal against ~15 ns written out (bench/README.md, "Effects: objects written out, not
// spread"). These files run once or more per webhook, delivery or worker call; a literal in them
// spreads only after its own keys, or is marked as a cold path on the line above it.
const HOT_FILES = [
  "src/engine/dispatcher.ts",
  "src/engine/message-fit.ts",
  "src/engine/effect-message.ts",
  "src/engine/http-effect-target.ts",
  "src/engine/node-http-transport.ts",
  "src/engine/http1-client.ts",
  "src/engine/http1-response.ts",
  "src/runs/run-callbacks.ts",
  "src/store/postgres/postgres-tx.ts",
];

/** `file:line` of each object literal in `source` with a key after a spread, not marked cold. */
function keysAfterSpread(file: string, source: string): string[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  const lines = source.split("\n");
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isObjectLiteralExpression(node)) {
      const first = node.properties.findIndex((p) => ts.isSpreadAssignment(p));
      if (first !== -1 && node.properties.slice(first + 1).some((p) => !ts.isSpreadAssignment(p))) {
        const line = sf.getLineAndCharacterOfPosition(node.getStart()).line;
        if (!/cold path/i.test(lines[line - 1] ?? "")) found.push(`${file}:${line + 1}`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return found;
}

describe("hot-path object literals", () => {
  it("write their keys before any spread", () => {
    const found = HOT_FILES.flatMap((file) => keysAfterSpread(file, readFileSync(file, "utf8")));
    expect(found).toEqual([]);
  });

  it("the check finds a key after a spread, and lets a marked cold path be", () => {
    const source = [
      "const a = { ...b, type: 1 };",
      "const c = { type: 1, ...b };",
      "// Cold path.",
      "const d = { ...b, type: 1 };",
    ].join("\n");
    expect(keysAfterSpread("x.ts", source)).toEqual(["x.ts:1"]);
  });
});
