import type { Command } from "commander";
import type { ConfigFlags } from "../config/load-config.js";
import { serve } from "../host/node/serve.js";
import { examples, type StoreOptions, withStoreOptions } from "./cli-common.js";
import { migrate } from "./migrate.js";
import { cliPrettyLog } from "./pretty-log.js";

interface ServeOptions extends StoreOptions {
  port?: number;
  host?: string;
}

/** What to do when the service cannot stop cleanly or a second signal arrives. */
interface ExitHandlers {
  failed(error: unknown): never;
  /** Exit code for "stop now" (a second signal). */
  exitNow(): never;
}

/** `finality serve` and `finality migrate`. */
export function addServeCommands(program: Command, exit: ExitHandlers): void {
  withStoreOptions(program.command("serve"))
    .description("run the HTTP service: webhooks, JSON API, dashboard, metrics, and the background loops")
    // A bad number is left for validation, which names the field like any other config error.
    .option("-p, --port <port>", "port to listen on (0: any free port)", Number)
    .option("--host <host>", "address to listen on")
    .addHelpText(
      "after",
      examples(
        "finality serve",
        "finality serve --config finality.config.json --port 8080",
        "FINALITY_WEBHOOK_SECRET=whsec_... finality serve --db ./ledger.db",
      ),
    )
    .action(async (options: ServeOptions) => {
      // Handlers first: a signal that arrives while starting, or right after the line below is
      // read by a supervisor, must still mean a graceful stop.
      let stopRequested: NodeJS.Signals | null = null;
      let stopService: (() => void) | null = null;
      const onSignal = (signal: NodeJS.Signals) => {
        // A second signal while stopping means "now".
        process.once(signal, () => exit.exitNow());
        stopRequested = signal;
        stopService?.();
      };
      process.once("SIGTERM", onSignal);
      process.once("SIGINT", onSignal);

      const service = await serve({
        configFile: options.config,
        flags: flagsOf(options),
        env: process.env,
        prettyLog: cliPrettyLog(),
      });
      stopService = () => {
        service.stop().then(
          () => process.exit(0),
          (error: unknown) => exit.failed(error),
        );
      };
      process.stdout.write(`finality listening on ${service.url}\n`);
      if (stopRequested !== null) stopService();
    });

  withStoreOptions(program.command("migrate"))
    .description("apply pending database migrations and exit (serve also does this at start)")
    .addHelpText(
      "after",
      examples("finality migrate --db ./finality.db", "DATABASE_URL=postgres://... finality migrate"),
    )
    .action(async (options: ServeOptions) => {
      const message = await migrate({
        configFile: options.config,
        flags: flagsOf(options),
        env: process.env,
      });
      process.stdout.write(`${message}\n`);
    });
}

function flagsOf(options: ServeOptions): ConfigFlags {
  return { port: options.port, host: options.host, db: options.db };
}
