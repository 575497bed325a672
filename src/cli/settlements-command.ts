import type { Command } from "commander";
import { followSettlements, settlementToJson } from "../engine/settlement-stream.js";
import type { Settlement } from "../store/settlement-feed.js";
import { examples, integerIn, type LedgerOptions, ledgerCommand, withLedger } from "./cli-common.js";
import { printJson, printTable, styleFor } from "./cli-output.js";

interface SettlementsOptions extends LedgerOptions {
  after?: string;
  follow?: boolean;
  provider?: string;
  kind?: string;
  limit?: number;
}

/** `finality settlements`: the settlement feed, one page or followed as it grows. */
export function addSettlementsCommand(program: Command): void {
  ledgerCommand(program, "settlements")
    .description("job settlements in commit order, from a cursor; --follow waits for new ones")
    .option("--after <cursor>", "only settlements after this cursor (default: from the start)")
    .option("--follow", "keep printing settlements as they commit, until interrupted")
    .option("--provider <name>", "only settlements of this provider instance")
    .option("--kind <kind>", "only jobs of this kind (when they settled)")
    .option(
      "--limit <n>",
      "settlements on the page, 1-1000 (default 100; without --follow)",
      integerIn(1, 1000),
    )
    .addHelpText(
      "after",
      examples(
        "finality settlements --limit 20",
        "finality settlements --after MTIz --json",
        "finality settlements --follow --json   # one JSON object per line",
      ),
    )
    .action(async (options: SettlementsOptions) => {
      const filter = { after: options.after, provider: options.provider, kind: options.kind };
      await withLedger(
        options,
        async (finality) => {
          if (!options.follow) {
            const page = await finality.store.readSettlements({ ...filter, limit: options.limit });
            if (options.json)
              return printJson({ items: page.items.map(settlementToJson), cursor: page.cursor });
            printSettlements(page.items);
            if (page.cursor !== null) process.stdout.write(`\ncursor: ${page.cursor}\n`);
            return;
          }
          const stop = new AbortController();
          const onSignal = () => stop.abort();
          process.once("SIGINT", onSignal);
          process.once("SIGTERM", onSignal);
          // Text gets the page's column names once, so that a line that arrives later is readable
          // on its own; JSON stays one object per line.
          if (!options.json) process.stdout.write(`${SETTLEMENT_COLUMNS.join("  ")}\n`);
          try {
            for await (const s of followSettlements(finality.store, { ...filter, signal: stop.signal })) {
              if (options.json) process.stdout.write(`${JSON.stringify(settlementToJson(s))}\n`);
              else process.stdout.write(`${settlementLine(s)}\n`);
            }
          } finally {
            process.off("SIGINT", onSignal);
            process.off("SIGTERM", onSignal);
          }
        },
        { readOnly: true },
      );
    });
}

const SETTLEMENT_COLUMNS = ["CURSOR", "PROVIDER", "ID", "STATE", "SETTLED AT", "BY"];

const settlementRow = (s: Settlement) => [
  s.cursor,
  s.provider,
  s.id,
  s.state,
  new Date(s.settledAt).toISOString(),
  s.settledBy ?? "—",
];

const settlementLine = (s: Settlement) => settlementRow(s).join("  ");

function printSettlements(items: readonly Settlement[]): void {
  const style = styleFor();
  if (items.length === 0) return void process.stdout.write("no settlements after this cursor\n");
  printTable(SETTLEMENT_COLUMNS, items.map(settlementRow), {
    style,
    paint: (column, cell) => (column === 3 ? style.status(cell) : cell),
  });
}
