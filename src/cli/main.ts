#!/usr/bin/env node
import { Command } from "commander";
import { ENV_VARIABLES } from "../config/env-overrides.js";
import type { ConfigFlags } from "../config/load-config.js";
import { isFinalityError, toError } from "../core/errors.js";
import { migrate } from "./migrate.js";
import { serve } from "./serve.js";

/** Exit codes: 0 done, 1 failed, 2 bad configuration or usage. */
const EXIT_FAILED = 1;
const EXIT_CONFIG = 2;

interface CommonOptions {
  config?: string;
  port?: number;
  host?: string;
  db?: string;
}

const program = new Command()
  .name("finality")
  .description("A ledger for long-running remote jobs: signed webhooks and polling merged into one state.")
  .showHelpAfterError()
  .addHelpText("after", `\nEnvironment: ${ENV_VARIABLES.join(", ")}`);

program
  .command("serve")
  .description("run the HTTP service (webhooks, JSON API, metrics)")
  .option("-c, --config <file>", "JSON configuration file (default: $FINALITY_CONFIG, else none)")
  // A bad number is left for validation, which names the field like any other config error.
  .option("-p, --port <port>", "port to listen on (0: any free port)", Number)
  .option("--host <host>", "address to listen on")
  .option("--db <path>", "SQLite database file")
  .action(async (options: CommonOptions) => {
    // Handlers first: a signal that arrives while starting, or right after the line below is
    // read by a supervisor, must still mean a graceful stop.
    let stopRequested: NodeJS.Signals | null = null;
    let stopService: (() => void) | null = null;
    const onSignal = (signal: NodeJS.Signals) => {
      // A second signal while stopping means "now".
      process.once(signal, () => process.exit(EXIT_FAILED));
      stopRequested = signal;
      stopService?.();
    };
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);

    const service = await serve({ configFile: options.config, flags: flagsOf(options), env: process.env });
    stopService = () => {
      service.stop().then(
        () => process.exit(0),
        (error: unknown) => fail(error),
      );
    };
    process.stdout.write(`finality listening on ${service.url}\n`);
    if (stopRequested !== null) stopService();
  });

program
  .command("migrate")
  .description("apply pending database migrations (serve also does this at start)")
  .option("-c, --config <file>", "JSON configuration file")
  .option("--db <path>", "SQLite database file")
  .action(async (options: CommonOptions) => {
    const message = await migrate({ configFile: options.config, flags: flagsOf(options), env: process.env });
    process.stdout.write(`${message}\n`);
  });

function flagsOf(options: CommonOptions): ConfigFlags {
  return { port: options.port, host: options.host, db: options.db };
}

function fail(error: unknown): never {
  if (isFinalityError(error, "invalid-config")) {
    process.stderr.write(`${error.message}\n`);
    process.exit(EXIT_CONFIG);
  }
  process.stderr.write(`finality: ${toError(error).message}\n`);
  process.exit(EXIT_FAILED);
}

program.parseAsync(process.argv).catch(fail);
