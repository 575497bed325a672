import { type Command, Option } from "commander";
import { effectToJson } from "../core/job-json.js";
import type { Effect } from "../core/model.js";
import { redactUrlsIn } from "../core/url-redaction.js";
import { retryEffect } from "../engine/effect-admin.js";
import { examples, integerIn, type LedgerOptions, ledgerCommand, withLedger } from "./cli-common.js";
import { isoOrDash, printJson, printTable, styleFor } from "./cli-output.js";

interface ListOptions extends LedgerOptions {
  status?: Effect["status"];
  provider?: string;
  job?: string;
  limit?: number;
  cursor?: string;
}

/** `finality effects list|retry`: the outbox. */
export function addEffectsCommands(program: Command): void {
  const effects = program
    .command("effects")
    .description("list the outbox's effects and re-arm dead ones")
    .addHelpText(
      "after",
      examples("finality effects list --status dead", "finality effects retry 0190f3c2-..."),
    );

  ledgerCommand(effects, "list")
    .description("list effects, newest first, one page at a time")
    .addOption(
      new Option("--status <status>", "only effects in this status").choices([
        "pending",
        "delivering",
        "delivered",
        "dead",
      ]),
    )
    .option("--provider <name>", "only effects of jobs of this provider instance")
    .option("--job <id>", "only effects of this job id")
    .option("--limit <n>", "effects per page, 1-500 (default 50)", integerIn(1, 500))
    .option("--cursor <cursor>", "the nextCursor of the previous page")
    .addHelpText(
      "after",
      examples(
        "finality effects list --status dead",
        "finality effects list --provider acme --job job-42 --json",
      ),
    )
    .action(async (options: ListOptions) => {
      const page = await withLedger(
        options,
        (finality) =>
          finality.store.listEffects({
            status: options.status,
            provider: options.provider,
            jobId: options.job,
            limit: options.limit,
            cursor: options.cursor,
          }),
        { readOnly: true },
      );
      if (options.json)
        return printJson({ items: page.items.map(effectToJson), nextCursor: page.nextCursor });
      const style = styleFor();
      if (page.items.length === 0) process.stdout.write("no effects match\n");
      else
        printTable(
          ["ID", "EFFECT", "JOB", "TRIGGER", "STATUS", "ATTEMPTS", "NEXT ATTEMPT", "LAST ERROR"],
          page.items.map((effect) => [
            effect.id,
            effect.name,
            `${effect.provider}/${effect.jobId}`,
            effect.trigger,
            effect.status,
            String(effect.attempts),
            effect.status === "pending" ? isoOrDash(effect.nextAttemptAt) : "—",
            effect.lastError === null ? "—" : redactUrlsIn(effect.lastError),
          ]),
          {
            style,
            paint: (column, cell) =>
              column === 4 ? style.status(cell.trim()) + cell.slice(cell.trim().length) : cell,
          },
        );
      if (page.nextCursor !== null) process.stdout.write(`\nnext page: --cursor ${page.nextCursor}\n`);
    });

  ledgerCommand(effects, "retry")
    .description("re-arm a dead (or pending) effect: delivered again now, under the same idempotency key")
    .argument("<id>", "effect id (from `finality effects list`)")
    .addHelpText(
      "after",
      `${examples("finality effects retry 0190f3c2-7c1a-7b4e-9d2f-1a2b3c4d5e6f")}
A running \`finality serve\` delivers it at its dispatcher's next poll (effectDelivery.pollIntervalSeconds).
The retry is recorded in the job's events.\n`,
    )
    .action(async (id: string, options: LedgerOptions) => {
      const effect = await withLedger(options, (finality) => retryEffect(finality, id));
      if (options.json) return printJson(effectToJson(effect));
      const style = styleFor();
      process.stdout.write(
        `${style.green("re-armed")} ${effect.name} for ${effect.provider}/${effect.jobId} (${effect.id}): ${style.status(effect.status)}, idempotency key ${effect.idempotencyKey}\n`,
      );
    });
}
