#!/usr/bin/env node
import { readFileSync } from "node:fs";
import { Command, CommanderError } from "commander";
import { ENV_VARIABLES } from "../config/env-overrides.js";
import { isFinalityError, toError } from "../core/errors.js";
import { addDemoCommand } from "./demo-command.js";
import { addDiscoverCommand } from "./discover-command.js";
import { addEffectsCommands } from "./effects-commands.js";
import { addJobsCommands } from "./jobs-commands.js";
import { addMaintenanceCommands } from "./maintenance-commands.js";
import { addReconcileCommands } from "./reconcile-commands.js";
import { addSendCommand } from "./send-command.js";
import { addServeCommands } from "./serve-commands.js";
import { addSettlementsCommand } from "./settlements-command.js";

/** Exit codes: 0 done, 1 failed, 2 bad configuration or usage. */
const EXIT_FAILED = 1;
const EXIT_USAGE = 2;

/** The installed package's own version (dist/cli/main.js → ../../package.json). */
const { version } = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

const program = new Command()
  .name("finality")
  .version(version, "-V, --version", "print the version")
  .description("A ledger for long-running remote jobs: signed webhooks and polling merged into one state.")
  // A usage error is one line and a pointer; the whole help drowned the line that mattered.
  .showHelpAfterError("(see `finality --help`, or `finality <command> --help`)")
  // Usage errors surface here as CommanderError (see fail) instead of exiting with commander's 1.
  .exitOverride()
  .addHelpText(
    "after",
    `\nEvery command reads the same configuration as \`serve\`: --config (or FINALITY_CONFIG) and the environment.
Environment: ${ENV_VARIABLES.join(", ")}

Examples:
  $ finality serve --config finality.config.json
  $ finality demo
  $ finality jobs list --state running --json
  $ finality effects list --status dead
  $ finality reconcile --once
  $ finality send generic job-1 succeeded   # a signed test webhook`,
  );

// `finality jobs list | head -1`: the reader has gone, so the rest of the output has nowhere to go.
// Stop quietly, as Unix tools do, instead of an unhandled 'error' event's stack trace.
process.stdout.on("error", (error: NodeJS.ErrnoException) => {
  if (error.code === "EPIPE") process.exit(0);
  throw error;
});

// One file per command group; each adds its commands to the program.
addServeCommands(program, { failed: fail, exitNow: () => process.exit(EXIT_FAILED) });
addDemoCommand(program);
addJobsCommands(program);
addEffectsCommands(program);
addReconcileCommands(program);
addDiscoverCommand(program);
addMaintenanceCommands(program);
addSendCommand(program);
addSettlementsCommand(program);

function fail(error: unknown): never {
  if (error instanceof CommanderError) {
    // Commander has printed its own errors and help; ours (finality.*) are printed here.
    if (!error.code.startsWith("commander.")) process.stderr.write(`finality: ${error.message}\n`);
    process.exit(error.exitCode === 0 ? 0 : EXIT_USAGE);
  }
  if (isFinalityError(error, "invalid-config")) {
    process.stderr.write(`${error.message}\n`);
    process.exit(EXIT_USAGE);
  }
  process.stderr.write(`finality: ${toError(error).message}\n`);
  process.exit(EXIT_FAILED);
}

program.parseAsync(process.argv).catch(fail);
