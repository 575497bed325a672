import type { Command } from "commander";
import { examples, type LedgerOptions, ledgerCommand } from "./cli-common.js";
import { printJson, progressBar, styleFor } from "./cli-output.js";
import { backup, prune, restore } from "./housekeeping-commands.js";

/** Wires the retention and backup functions of housekeeping-commands.ts into the CLI, in its one style. */
export function addMaintenanceCommands(program: Command): void {
  ledgerCommand(program, "prune")
    .description("one retention pass with the configured windows (serve runs it on a schedule), then exit")
    .option("--dry-run", "count what would be removed, remove nothing")
    .addHelpText(
      "after",
      examples("finality prune --dry-run", "finality prune --config finality.config.json --json"),
    )
    .action(async (options: LedgerOptions & { dryRun?: boolean }) => {
      const bar = options.json ? null : progressBar("pruning", 0);
      const result = await prune({
        configFile: options.config,
        flags: { db: options.db },
        env: process.env,
        dryRun: options.dryRun === true,
        onProgress: (_target, total) => bar?.update(total),
      });
      bar?.finish();
      if (options.json) return printJson(result);
      const rows = Object.entries(result.rows).map(([table, n]) => `${table} ${n}`);
      process.stdout.write(
        `prune${result.dryRun ? " (dry run)" : ""}: ${rows.join(", ")}; database ${result.sizeBytes} bytes\n`,
      );
    });

  ledgerCommand(program, "backup")
    .description("copy the configured SQLite database while it is in use, and check the copy")
    .argument("<file>", "where to write the copy")
    .addHelpText(
      "after",
      examples(
        "finality backup /backups/finality-$(date +%F).db",
        "finality backup copy.db --db ./finality.db --json",
      ),
    )
    .action(async (file: string, options: LedgerOptions) => {
      const result = await backup({
        configFile: options.config,
        flags: { db: options.db },
        env: process.env,
        target: file,
      });
      // A copy that fails its integrity check is no backup: a cron job must see it fail.
      if (result.integrity !== "ok") {
        process.exitCode = 1;
        process.stderr.write(
          `the copy fails its integrity check (is the database damaged?): ${result.integrity}\n`,
        );
      }
      if (options.json) return printJson(result);
      const style = styleFor();
      const integrity = result.integrity === "ok" ? style.green("ok") : style.red(result.integrity);
      process.stdout.write(
        `backed up ${result.source} to ${result.target}: ${result.bytes} bytes, ${result.jobs} jobs, ${result.events} events, integrity ${integrity}\n`,
      );
    });

  ledgerCommand(program, "restore")
    .description(
      "check a backup and put it in place of the configured SQLite database (stop the service first)",
    )
    .argument("<backup>", "a file written by `finality backup`")
    .option("--force", "replace the database that is there")
    .addHelpText("after", examples("finality restore /backups/finality-2026-01-01.db --force"))
    .action(async (file: string, options: LedgerOptions & { force?: boolean }) => {
      const result = await restore({
        configFile: options.config,
        flags: { db: options.db },
        env: process.env,
        backup: file,
        force: options.force === true,
      });
      if (options.json) return printJson(result);
      process.stdout.write(
        `restored ${result.backup} to ${result.target}: ${result.jobs} jobs, ${result.events} events\n`,
      );
    });
}
