import type { Command } from "commander";
import type { FinalityConfig } from "../config/config-schema.js";
import { RUNS_PROVIDER } from "../core/run-model.js";
import type { FinalityEngine } from "../engine/finality-engine.js";
import { reconcilerOnNode } from "../host/node/finality-from-config.js";
import type { Logger } from "../http/request-log.js";
import { createRunService, type RunService } from "../runs/run-service.js";
import { runServiceOptionsFrom } from "../runs/run-service-config.js";
import type { SweepCounts } from "../runs/sweep-leases.js";
import { sweepUntilDone } from "../runs/sweep-until-done.js";
import { examples, type OnceOptions, onceCommand, requireOnce, withLedger } from "./cli-common.js";
import { printJson, progressBar, styleFor } from "./cli-output.js";

/** Most due jobs the progress bar counts before it starts (a count on the due index). */
const DUE_COUNT_CAP = 1_000_000;

/** `finality reconcile --once` and `finality sweep --once`: one pass of a serve loop, for cron. */
export function addReconcileCommands(program: Command): void {
  onceCommand(program, "reconcile", "one pass over what is due now")
    .description("poll the providers for every open job that is due, once, then exit")
    .addHelpText(
      "after",
      `${examples("finality reconcile --once", "finality reconcile --once --config finality.config.json --json")}
Safe beside a running \`finality serve\`: each due job is claimed before it is polled, so no job is
polled twice at once.\n`,
    )
    .action(async (options: OnceOptions) => {
      requireOnce(options, "reconcile");
      const result = await withLedger(options, async (finality, config) => {
        const started = Date.now();
        const tally = createPollTally();
        const reconciler = reconcilerOnNode(finality, config, tally.logger);
        const due = await finality.store.countJobs({ of: "due", now: finality.clock.now() }, DUE_COUNT_CAP);
        const bar = options.json ? null : progressBar("polling", due.count);
        const now = finality.clock.now();
        const polled = await reconciler.runOnce((done) => bar?.update(done));
        bar?.finish();
        const skipped = await skippedJobs(finality, config, now);
        return {
          polled,
          results: tally.results(polled),
          ...(skipped ? { skipped } : {}),
          ...(tally.failures.length > 0 ? { failures: tally.failures } : {}),
          durationMs: Date.now() - started,
        };
      });
      if (options.json) return printJson(result);
      const style = styleFor();
      const problems = Object.entries(result.results).filter(([kind, n]) => kind !== "observed" && n > 0);
      const detail = problems.map(([kind, n]) => style.yellow(`${kind} ${n}`)).join(", ");
      process.stdout.write(
        `reconcile: polled ${result.polled} job${result.polled === 1 ? "" : "s"} in ${result.durationMs} ms${detail ? ` (${detail})` : ""}\n`,
      );
      const failures = result.failures ?? [];
      for (const failure of failures.slice(0, FAILURES_SHOWN))
        process.stdout.write(
          `  ${style.yellow("failed")} ${failure.provider}/${failure.jobId}: ${failure.error}\n`,
        );
      if (failures.length > FAILURES_SHOWN)
        process.stdout.write(
          `  … and ${failures.length - FAILURES_SHOWN} more failed polls (--json lists them all)\n`,
        );
      if (result.skipped) {
        const { count, providers } = result.skipped;
        const names = providers.length > 0 ? ` (${providers.join(", ")})` : "";
        process.stdout.write(
          `${style.yellow(`skipped ${count} due job${count === 1 ? "" : "s"}`)} of providers not in the configuration${names}: pass the configuration that names them (--config or FINALITY_CONFIG)\n`,
        );
      }
    });

  onceCommand(program, "sweep", "one pass over the leases due now")
    .description("expire the leases of runs whose workers stopped heartbeating, once, then exit")
    .addHelpText(
      "after",
      `${examples("finality sweep --once", "finality sweep --once --json")}
Safe beside a running \`finality serve\` or another sweep: each expiry is one transaction that
decides again on what it reads.\n`,
    )
    .action(async (options: OnceOptions) => {
      requireOnce(options, "sweep");
      const result = await withLedger(options, async (finality, config) => {
        const runs = createRunService({ finality, ...runServiceOptionsFrom(config.workers) });
        try {
          const counts: Partial<SweepCounts> = {};
          const summary = await sweepUntilDone(countingSweeps(runs, counts));
          return { counts, summary };
        } finally {
          runs.close();
        }
      });
      if (options.json) return printJson(result.counts);
      process.stdout.write(`${result.summary}\n`);
    });
}

/** Failed polls a text pass lists one per line; `--json` has them all. */
const FAILURES_SHOWN = 20;

/** Most open jobs read to name the providers of skipped jobs (a sample; the count is exact). */
const SKIPPED_SAMPLE = 500;

/**
 * Due jobs the pass did not poll: each configured provider (and `runs`) has a lane that claimed
 * all of its due jobs, so what is still due as of the pass's start belongs to a provider the
 * configuration does not name (a `--config` forgotten, a provider removed).
 */
async function skippedJobs(finality: FinalityEngine, config: FinalityConfig, now: number) {
  const due = await finality.store.countJobs({ of: "due", now }, DUE_COUNT_CAP);
  if (due.count === 0) return null;
  const sample = await finality.listJobs({ open: true, limit: SKIPPED_SAMPLE });
  const configured = (provider: string) =>
    provider === RUNS_PROVIDER || Object.hasOwn(config.providers, provider);
  const providers = [
    ...new Set(sample.items.map((job) => job.provider).filter((p) => !configured(p))),
  ].sort();
  return { count: due.count, reason: "provider not configured", providers };
}

/** The run service, adding up what each sweep batch did. */
function countingSweeps(runs: RunService, counts: Partial<SweepCounts>): RunService {
  return {
    ...runs,
    async sweepOnce(limit) {
      const batch = await runs.sweepOnce(limit);
      for (const [outcome, n] of Object.entries(batch) as [keyof SweepCounts, number][])
        if (n > 0) counts[outcome] = (counts[outcome] ?? 0) + n;
      return batch;
    },
  };
}

/**
 * The reconciler reports every poll that did not observe a state as a "reconcile poll" warning
 * (see host/node/background-loop.ts); counting those gives the outcome of each poll. Other warnings and
 * errors go to stderr.
 */
function createPollTally() {
  const seen: Record<string, number> = {};
  /** Each failed poll with its cause (URL without credentials, error code, HTTP status). */
  const failures: {
    provider: string;
    jobId: string;
    error: string;
    url?: string;
    code?: string;
    status?: number;
  }[] = [];
  const logger: Logger = {
    info() {},
    warn(fields, message) {
      const poll = fields as {
        result?: unknown;
        provider?: unknown;
        jobId?: unknown;
        error?: unknown;
        url?: string;
        code?: string;
        status?: number;
      };
      const result = poll.result;
      if (message === "reconcile poll" && typeof result === "string") {
        seen[result] = (seen[result] ?? 0) + 1;
        if (result === "failed" || result === "error")
          failures.push({
            provider: String(poll.provider),
            jobId: String(poll.jobId),
            error: String(poll.error),
            ...(poll.url ? { url: poll.url } : {}),
            ...(poll.code ? { code: poll.code } : {}),
            ...(poll.status ? { status: poll.status } : {}),
          });
        return;
      }
      process.stderr.write(`warning: ${message ?? ""} ${JSON.stringify(fields)}\n`);
    },
    error(fields, message) {
      process.stderr.write(`error: ${message ?? ""} ${JSON.stringify(fields)}\n`);
    },
  };
  return {
    logger,
    failures,
    results(polled: number): Record<string, number> {
      const other = Object.values(seen).reduce((a, b) => a + b, 0);
      return { observed: Math.max(0, polled - other), ...seen };
    },
  };
}
