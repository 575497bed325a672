import type { Command } from "commander";
import { sweepOptionsFromConfig } from "../host/discovery-from-config.js";
import { type SweepResult, sweepOnce } from "../providers/discovery-sweep.js";
import { createNodeProviders } from "../providers/node-providers.js";
import {
  examples,
  type OnceOptions,
  onceCommand,
  requireOnce,
  usageError,
  withLedger,
} from "./cli-common.js";
import { printJson, styleFor } from "./cli-output.js";

type DiscoverOptions = OnceOptions & { provider?: string };

/** `finality discover --once`: one discovery sweep of each provider instance with discovery on. */
export function addDiscoverCommand(program: Command): void {
  onceCommand(program, "discover", "one sweep per provider instance")
    .description("list the providers' recent jobs and adopt those the ledger does not know, once, then exit")
    .option("--provider <name>", "only this provider instance")
    .addHelpText(
      "after",
      `${examples("finality discover --once", "finality discover --once --provider acme --json")}
Sweeps the instances with \`discover.enabled\`, from the cursor the last sweep stored, within each
one's page budget; a listed job carrying an open intent's tag attaches that intent. Safe beside a
running \`finality serve\`: adopting a job is one transaction that finds a known job and leaves it.\n`,
    )
    .action(async (options: DiscoverOptions) => {
      requireOnce(options, "discover");
      const style = styleFor();
      const started = Date.now();
      const sweeps = await withLedger(options, async (finality, config) => {
        const providers = createNodeProviders(config.providers, () => finality.clock.now());
        const all = sweepOptionsFromConfig(config, providers, options.provider);
        if (all.length === 0) {
          const which = options.provider === undefined ? "any provider instance" : `"${options.provider}"`;
          throw usageError(`discovery is not on for ${which}: set providers.<name>.discover.enabled`);
        }
        const results: SweepResult[] = [];
        for (const sweep of all) {
          const onPage = options.json
            ? undefined
            : (page: { provider: string; page: number; listed: number; adopted: number; attached: number }) =>
                process.stdout.write(
                  `discover ${page.provider}: page ${page.page}: ${page.listed} listed, ${page.adopted} adopted, ${page.attached} attached\n`,
                );
          results.push(await sweepOnce(finality, { ...sweep, ...(onPage ? { onPage } : {}) }));
        }
        return results;
      });
      const durationMs = Date.now() - started;
      if (options.json) return printJson({ sweeps, durationMs });
      for (const sweep of sweeps) {
        const end = sweep.failed
          ? style.yellow(`stopped: ${sweep.failed.error}${retryHint(sweep.failed.retryAfterMs)}`)
          : sweep.done
            ? "up to date"
            : style.yellow("page budget spent; the next sweep goes on from here");
        process.stdout.write(
          `discover ${sweep.provider}: ${sweep.pages} page${sweep.pages === 1 ? "" : "s"}, ${sweep.adopted} adopted, ${sweep.attached} attached${sweep.refused > 0 ? style.yellow(`, ${sweep.refused} skipped (id breaks the job id rule)`) : ""} (${end})\n`,
        );
      }
      if (sweeps.some((sweep) => sweep.failed)) process.exitCode = 1;
    });
}

function retryHint(retryAfterMs: number | undefined): string {
  return retryAfterMs === undefined ? "" : `; retry after ${Math.ceil(retryAfterMs / 1000)} s`;
}
