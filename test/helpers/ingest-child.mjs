// A second process for the SQLite race test: reads its observations as one JSON line on stdin,
// opens the built package on the given file, says "ready", waits for "go", ingests, reports.
import { createInterface } from "node:readline";
import { createFinality, createSqliteStore } from "../../dist/exports/sqlite.js";

const [path, chunkText] = process.argv.slice(2);
const chunk = Number(chunkText ?? "10");
const lines = createInterface({ input: process.stdin })[Symbol.asyncIterator]();

const observations = JSON.parse((await lines.next()).value);
const store = createSqliteStore({ path });
const finality = createFinality({ store, effects: [{ name: "notify", handler: async () => {} }] });
process.stdout.write("ready\n");
if ((await lines.next()).value !== "go") throw new Error("expected go");

const reasons = {};
let settled = 0;
for (let i = 0; i < observations.length; i += chunk) {
  const outcomes = await Promise.all(observations.slice(i, i + chunk).map((o) => finality.ingest(o)));
  for (const outcome of outcomes) {
    if (outcome.settled) settled += 1;
    const reason = outcome.reason ?? "applied";
    reasons[reason] = (reasons[reason] ?? 0) + 1;
  }
}
await finality.close();
process.stdout.write(`${JSON.stringify({ ingested: observations.length, settled, reasons })}\n`);
process.exit(0);
