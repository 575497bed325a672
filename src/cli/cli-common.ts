import { type Command, CommanderError, InvalidArgumentError } from "commander";
import type { FinalityConfig } from "../config/config-schema.js";
import { loadConfig } from "../config/load-config.js";
import type { FinalityEngine } from "../engine/finality-engine.js";
import { finalityFromConfig, requireExistingDatabase } from "../host/node/finality-from-config.js";

/**
 * What every command shares: the same configuration as `serve` (`--config`, FINALITY_CONFIG
 * and the other FINALITY_* variables, `--db`), and `--json` on the read commands.
 *
 * Read commands open the configured store directly rather than calling a running server: they
 * work when no server runs (cron, a stopped service, an incident), need no API token, and see
 * exactly what the ledger holds. SQLite allows this beside a running `serve` (WAL: readers never
 * block the writer; a write waits on the file's lock), and so does PostgreSQL. Opening the store
 * applies pending migrations, as `serve` does.
 *
 * These commands act on a ledger that exists: a SQLite file that is not there is refused, naming
 * the path (a typo in `--db` would otherwise create an empty ledger and answer "no jobs match").
 * A command that only reads (`readOnly`) reads no secret: an `env:` reference outside `store`
 * may name a variable that is not set.
 */
export interface StoreOptions {
  config?: string | undefined;
  db?: string | undefined;
}

export interface JsonOption {
  json?: boolean | undefined;
}

export function withStoreOptions(command: Command): Command {
  return command
    .option("-c, --config <file>", "JSON configuration file (default: $FINALITY_CONFIG, else none)")
    .option("--db <path>", "SQLite database file (overrides the configuration's store)");
}

export function withJsonOption(command: Command): Command {
  return command.option("--json", "print JSON (the shapes of the HTTP API) instead of text");
}

/** The flags of a command that opens the ledger and can answer in JSON. */
export type LedgerOptions = StoreOptions & JsonOption;

/** A subcommand that opens the ledger (`--config`, `--db`) and can answer in JSON (`--json`). */
export function ledgerCommand(parent: Command, name: string): Command {
  return withJsonOption(withStoreOptions(parent.command(name)));
}

export type OnceOptions = LedgerOptions & { once?: boolean };

/**
 * One pass of a loop that `finality serve` runs continuously, for cron. `--once` is required, so
 * that nobody mistakes the command for the service; `pass` says what one pass does.
 */
export function onceCommand(program: Command, name: string, pass: string): Command {
  return ledgerCommand(program, name).option(
    "--once",
    `${pass} (required: \`finality serve\` runs the loop)`,
  );
}

export function requireOnce(options: OnceOptions, command: string): void {
  if (options.once) return;
  throw usageError(`${command} needs --once (the continuous loop runs inside \`finality serve\`)`);
}

interface LedgerAccess {
  /** The command only reads: secrets are not resolved. */
  readOnly?: boolean;
}

/** The configuration `serve` would use with these flags and this environment. */
function configOf(options: StoreOptions, access: LedgerAccess = {}): FinalityConfig {
  return loadConfig({
    file: options.config,
    env: process.env,
    flags: { db: options.db },
    resolveSecrets: access.readOnly !== true,
  });
}

/** Opens the ledger the configuration describes, runs `work`, and always closes it. */
export async function withLedger<T>(
  options: StoreOptions,
  work: (finality: FinalityEngine, config: FinalityConfig) => Promise<T>,
  access: LedgerAccess = {},
): Promise<T> {
  const config = configOf(options, access);
  requireExistingDatabase(config.store);
  const finality = await finalityFromConfig(config);
  try {
    return await work(finality, config);
  } finally {
    await finality.close();
  }
}

/** The help text's examples block. */
export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => (line.startsWith("#") ? `  ${line}` : `  $ ${line}`)).join("\n")}\n`;
}

/** A whole number within bounds, for options such as `--limit`. */
export function integerIn(min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < min || n > max)
      throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}`);
    return n;
  };
}

/** A JSON value given on the command line. */
export function jsonArgument(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('expected JSON, e.g. \'{"customer": "c_42"}\'');
  }
}

/** A command used wrongly: main prints the message and exits 2, as for a bad option. */
export function usageError(message: string): CommanderError {
  return new CommanderError(2, "finality.usage", message);
}
