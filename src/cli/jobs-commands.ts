import { Argument, type Command, Option } from "commander";
import { FinalityError, isFinalityError } from "../core/errors.js";
import { eventToJson, jobToJson } from "../core/job-json.js";
import type { Job, JobEvent } from "../core/model.js";
import { isRetryQueued } from "../core/retry-queued.js";
import { CANONICAL_STATES } from "../core/states.js";
import {
  examples,
  integerIn,
  jsonArgument,
  type LedgerOptions,
  ledgerCommand,
  withLedger,
} from "./cli-common.js";
import { isoOrDash, printFacts, printJson, printTable, type Style, styleFor } from "./cli-output.js";

interface ListOptions extends LedgerOptions {
  state?: string;
  provider?: string;
  kind?: string;
  stuck?: boolean;
  open?: boolean;
  limit?: number;
  cursor?: string;
}

/** `finality jobs list|show|wait|events|register|observe`. */
export function addJobsCommands(program: Command): void {
  const jobs = program
    .command("jobs")
    .description("list, inspect, register and observe jobs in the ledger")
    .addHelpText(
      "after",
      examples("finality jobs list --state running", "finality jobs show generic operations/abc"),
    );

  ledgerCommand(jobs, "list")
    .description("list jobs, newest first, one page at a time")
    .addOption(new Option("--state <state>", "only jobs in this state").choices(CANONICAL_STATES))
    .option("--provider <name>", "only jobs of this provider instance")
    .option("--kind <kind>", "only jobs of this kind")
    .option("--stuck", "only jobs flagged stuck")
    .option("--no-stuck", "only jobs not flagged stuck")
    .option("--open", "only open (not yet settled) jobs")
    .option("--limit <n>", "jobs per page, 1-500 (default 50)", integerIn(1, 500))
    .option("--cursor <cursor>", "the nextCursor of the previous page")
    .addHelpText(
      "after",
      examples(
        "finality jobs list --state running --provider acme",
        "finality jobs list --stuck --json | jq '.items[].id'",
        "finality jobs list --limit 100 --cursor MTIz   # the next page",
      ),
    )
    .action(async (options: ListOptions) => {
      const page = await withLedger(
        options,
        (finality) =>
          finality.listJobs({
            state: options.state,
            provider: options.provider,
            kind: options.kind,
            stuck: options.stuck,
            open: options.open,
            limit: options.limit,
            cursor: options.cursor,
          }),
        { readOnly: true },
      );
      if (options.json) return printJson({ items: page.items.map(jobToJson), nextCursor: page.nextCursor });
      printJobs(page.items, styleFor());
      if (page.nextCursor !== null) process.stdout.write(`\nnext page: --cursor ${page.nextCursor}\n`);
    });

  ledgerCommand(jobs, "show")
    .description("show one job")
    .argument("<provider>", "provider instance name")
    .argument("<id>", "job id (as the provider gives it; may contain '/')")
    .addHelpText(
      "after",
      examples("finality jobs show generic operations/abc", "finality jobs show acme job-42 --json"),
    )
    .action(async (provider: string, id: string, options: LedgerOptions) => {
      const job = await withLedger(options, (finality) => finality.getJob({ provider, id }), {
        readOnly: true,
      });
      if (job === null) throw notFound(provider, id);
      if (options.json) return printJson(jobToJson(job));
      printJob(job, styleFor());
    });

  ledgerCommand(jobs, "wait")
    .description(
      "wait for a job to settle, then show it; the exit code says how it ended (0 succeeded, 3 another terminal state, 4 still open at --timeout)",
    )
    .argument("<provider>", "provider instance name")
    .argument("<id>", "job id")
    .option("--timeout <seconds>", "how long to wait, 0-86400 (default 60)", integerIn(0, 86_400))
    .addHelpText(
      "after",
      examples(
        "finality jobs wait openai batch_abc --timeout 600 && echo done",
        "finality jobs wait acme job-42 --json",
      ),
    )
    .action(async (provider: string, id: string, options: LedgerOptions & { timeout?: number }) => {
      const timeoutMs = (options.timeout ?? 60) * 1000;
      const job = await withLedger(
        options,
        async (finality) => {
          try {
            return await finality.waitFor({ provider, id }, { timeoutMs });
          } catch (error) {
            if (!isFinalityError(error, "wait-timeout")) throw error;
            return finality.getJob({ provider, id });
          }
        },
        { readOnly: true },
      );
      if (job === null) throw notFound(provider, id);
      if (options.json) printJson(jobToJson(job));
      else printJob(job, styleFor());
      process.exitCode = waitExitCode(job);
    });

  ledgerCommand(jobs, "events")
    .description("a job's audit trail: every observation, applied or not, oldest first")
    .argument("<provider>", "provider instance name")
    .argument("<id>", "job id")
    .option("--after <seqNo>", "only events after this one", integerIn(0, Number.MAX_SAFE_INTEGER))
    .option("--limit <n>", "at most this many events, 1-10000 (default 1000)", integerIn(1, 10_000))
    .addHelpText(
      "after",
      examples("finality jobs events generic operations/abc", "finality jobs events acme job-42 --json"),
    )
    .action(
      async (provider: string, id: string, options: LedgerOptions & { after?: number; limit?: number }) => {
        const events = await withLedger(
          options,
          async (finality) => {
            const found = await finality.jobEvents(
              { provider, id },
              { after: options.after, limit: options.limit },
            );
            if (found.length === 0 && (await finality.getJob({ provider, id })) === null)
              throw notFound(provider, id);
            return found;
          },
          { readOnly: true },
        );
        if (options.json) return printJson({ items: events.map(eventToJson) });
        printEvents(events, styleFor());
      },
    );

  ledgerCommand(jobs, "register")
    .description("register a job (never changes the state of a job already known)")
    .argument("<provider>", "provider instance name (must be configured)")
    .argument("<id>", "job id")
    .option("--kind <kind>", "the job's kind, e.g. video or batch")
    .option("--metadata <json>", "JSON metadata kept with the job", jsonArgument)
    .addHelpText(
      "after",
      examples(
        "finality jobs register generic operations/abc --kind video",
        `finality jobs register acme job-42 --metadata '{"customer": "c_1"}' --json`,
      ),
    )
    .action(
      async (
        provider: string,
        id: string,
        options: LedgerOptions & { kind?: string; metadata?: unknown },
      ) => {
        const outcome = await withLedger(options, (finality) =>
          finality.register({
            provider,
            id,
            ...(options.kind !== undefined ? { kind: options.kind } : {}),
            ...(options.metadata !== undefined ? { metadata: options.metadata } : {}),
          }),
        );
        if (options.json) return printJson(jobToJson(outcome.job));
        const style = styleFor();
        const what = outcome.created ? style.green("registered") : "already known";
        process.stdout.write(`${what} ${provider}/${id}: ${style.status(outcome.job.state)}\n`);
      },
    );

  ledgerCommand(jobs, "observe")
    .description(
      "record what you know of a job (source api), through the same reducer as a webhook: e.g. close a stuck job",
    )
    .argument("<provider>", "provider instance name (must be configured)")
    .argument("<id>", "job id")
    // Refused like `jobs list --state`: an unknown name would only be recorded as unknown-state.
    .addArgument(new Argument("<state>", "the state observed").choices(CANONICAL_STATES))
    .option("--seq <n>", "ordering of updates of the same rank", integerIn(0, Number.MAX_SAFE_INTEGER))
    .option("--result <json>", "the job's result, as JSON", jsonArgument)
    .option("--error <json>", "the job's error, as JSON", jsonArgument)
    .addHelpText(
      "after",
      examples(
        `finality jobs observe acme job-42 failed --error '{"reason": "abandoned by operator"}'`,
        "finality jobs observe generic operations/abc succeeded --json",
      ),
    )
    .action(
      async (
        provider: string,
        id: string,
        state: string,
        options: LedgerOptions & { seq?: number; result?: unknown; error?: unknown },
      ) => {
        const outcome = await withLedger(options, (finality) =>
          finality.ingest({
            provider,
            id,
            state,
            source: "api",
            ...(options.seq !== undefined ? { seq: options.seq } : {}),
            ...(options.result !== undefined ? { result: options.result } : {}),
            ...(options.error !== undefined ? { error: options.error } : {}),
          }),
        );
        const result = outcome.reason ?? "applied";
        if (options.json)
          return printJson({
            outcome: result,
            applied: outcome.applied,
            job: outcome.job ? jobToJson(outcome.job) : null,
          });
        const style = styleFor();
        const now = outcome.job ? style.status(outcome.job.state) : "no job";
        const what = outcome.applied ? style.green("applied") : `recorded, not applied (${result})`;
        process.stdout.write(`${what}: ${provider}/${id} is ${now}\n`);
        if (outcome.effects.length > 0)
          process.stdout.write(
            `effects enqueued: ${outcome.effects.join(", ")} (a running serve delivers them)\n`,
          );
      },
    );
}

/** `jobs wait`'s exit code: 0 succeeded, 3 settled otherwise (failed, cancelled, expired, lost), 4 still open. */
function waitExitCode(job: Job): number {
  if (job.settledAt === null) return 4;
  return job.state === "succeeded" ? 0 : 3;
}

function notFound(provider: string, id: string): FinalityError {
  return new FinalityError("not-found", `no job ${provider}/${id}`, { details: { provider, id } });
}

function printJobs(jobs: readonly Job[], style: Style): void {
  if (jobs.length === 0) {
    process.stdout.write("no jobs match\n");
    return;
  }
  const rows = jobs.map((job) => [
    job.provider,
    job.id,
    job.kind ?? "—",
    job.state,
    isoOrDash(job.submittedAt),
    job.settledBy ?? "—",
    [job.stuck ? "stuck" : "", job.conflict ? "conflict" : "", job.anomaly ?? ""].filter(Boolean).join(",") ||
      "—",
  ]);
  printTable(["PROVIDER", "ID", "KIND", "STATE", "SUBMITTED", "SETTLED BY", "FLAGS"], rows, {
    style,
    paint: (column, cell) =>
      column === 3 ? style.status(cell) : column === 6 && cell.trim() !== "—" ? style.red(cell) : cell,
  });
}

function printJob(job: Job, style: Style): void {
  printFacts(
    [
      ["provider", job.provider],
      ["id", job.id],
      ["kind", job.kind ?? "—"],
      ["state", style.status(job.state)],
      ["version", String(job.version)],
      ["submitted", isoOrDash(job.submittedAt)],
      ["settled", job.settledAt === null ? "—" : `${isoOrDash(job.settledAt)} by ${job.settledBy}`],
      ["registered", job.registered ? "yes" : "no (adopted from a webhook)"],
      [
        "polls",
        `${job.pollAttempts}, last ${isoOrDash(job.lastPolledAt)}, next ${isoOrDash(job.nextCheckAt)}`,
      ],
      ...(job.lastPollError === null
        ? []
        : [
            [
              "last poll error",
              `${style.red(job.lastPollError.message)} (${isoOrDash(job.lastPollError.at)})`,
            ] as [string, string],
          ]),
      [
        "flags",
        [job.stuck && "stuck", job.conflict && "conflict", job.anomaly].filter(Boolean).join(", ") || "—",
      ],
      ["result", job.result === null ? "—" : JSON.stringify(job.result)],
      ["error", job.error === null ? "—" : JSON.stringify(job.error)],
    ],
    style,
  );
}

function printEvents(events: readonly JobEvent[], style: Style): void {
  const rows = events.map((event) => [
    String(event.seqNo),
    isoOrDash(event.at),
    event.source,
    event.rawState ?? "—",
    event.state,
    event.applied ? "applied" : isRetryQueued(event) ? "retry queued" : (event.reason ?? "ignored"),
    event.deliveryId ?? "—",
  ]);
  printTable(["#", "AT", "SOURCE", "RAW", "STATE", "OUTCOME", "DELIVERY ID"], rows, {
    style,
    paint: (column, cell) =>
      column === 4 || column === 5 ? style.status(cell.trim()) + cell.slice(cell.trim().length) : cell,
  });
}
