import type { Command } from "commander";
import { examples, integerIn } from "./cli-common.js";
import { styleFor } from "./cli-output.js";
import { type DemoOptions, startDemo } from "./demo.js";

/** `finality demo`: the service, two faulty fake providers, and the dashboard's URL. */
export function addDemoCommand(program: Command): void {
  program
    .command("demo")
    .description("run the service on a temporary database with two faulty fake providers; open the dashboard")
    .option(
      "-p, --port <port>",
      "port for the service and dashboard (0: any free port)",
      integerIn(0, 65535),
      8787,
    )
    .option("--rate <jobs>", "new jobs per second, per provider", integerIn(1, 100), 1)
    .option("--for <seconds>", "stop creating jobs after this long (0: never)", integerIn(0, 86_400), 300)
    .option("--down-after <seconds>", "when the flaky provider goes down", integerIn(0, 86_400), 20)
    .option("--down-for <seconds>", "how long it stays down", integerIn(0, 86_400), 60)
    .option("--keep", "keep the temporary database when stopping")
    .addHelpText(
      "after",
      `${examples("finality demo", "finality demo --port 0 --rate 3", "npm run demo")}
Stop it with Ctrl-C: the service stops cleanly and the temporary database is removed (--keep keeps it).\n`,
    )
    .action(
      async (
        options: Omit<DemoOptions, "forSeconds" | "downAfterSeconds" | "downForSeconds" | "keep"> & {
          for: number;
          downAfter: number;
          downFor: number;
          keep?: boolean;
        },
      ) => {
        const demo = await startDemo({
          port: options.port,
          rate: options.rate,
          forSeconds: options.for,
          downAfterSeconds: options.downAfter,
          downForSeconds: options.downFor,
          keep: options.keep === true,
        });
        const style = styleFor();
        process.stdout.write(
          [
            style.bold("Finality demo"),
            `  dashboard   ${style.blue(`${demo.url}/`)}`,
            `  ledger      ${demo.dbPath} (${options.keep ? "kept" : "removed"} on exit)`,
            `  stream      curl -N ${demo.url}/v1/settlements/stream   (every settlement as it commits)`,
            `  providers   acme: 25% of webhooks lost, 20% sent twice, 25% late`,
            `              flaky: 35% lost, 30% late, down for ${options.downFor} s from ${options.downAfter} s`,
            "  the reconciler polls every open job after 8 s, then every 3-15 s",
            "  runs        one every 3 s; worker renderer-2 crashes every 45 s (its leases expire)",
            "Press Ctrl-C to stop.",
            "",
          ].join("\n"),
        );
        const ticker = setInterval(() => process.stdout.write(`${style.dim(demo.status())}\n`), 10_000);
        await new Promise<void>((resolve) => {
          const onSignal = () => {
            // A second Ctrl-C while stopping means "now".
            process.once("SIGINT", () => process.exit(1));
            process.once("SIGTERM", () => process.exit(1));
            resolve();
          };
          process.once("SIGINT", onSignal);
          process.once("SIGTERM", onSignal);
        });
        clearInterval(ticker);
        process.stdout.write("stopping…\n");
        await demo.stop();
        process.stdout.write("demo stopped\n");
        process.exit(0);
      },
    );
}
