import { runSchedule, type ScheduleResult, shrink, simDatabasePath } from "./run-schedule.js";
import { generateSchedule } from "./schedule.js";
import type { Schedule } from "./sim-types.js";
import { formatTrace, Summary } from "./summary.js";

export interface Failure {
  seed: number;
  result: ScheduleResult;
  shrunk: Schedule;
  shrunkResult: ScheduleResult;
}

/** Runs the schedules of seeds `start .. start + count - 1`; shrinks the first `shrinkFirst` failures. */
export async function simulate(options: {
  start: number;
  count: number;
  shrinkFirst?: number;
  onProgress?: (summary: Summary) => void;
  progressEvery?: number;
}): Promise<{ summary: Summary; failures: Failure[] }> {
  const summary = new Summary();
  const failures: Failure[] = [];
  const path = simDatabasePath(`run-${options.start}`);
  for (let seed = options.start; seed < options.start + options.count; seed++) {
    const result = await runSchedule(generateSchedule(seed), path);
    summary.add(result);
    if (result.violation && failures.length < (options.shrinkFirst ?? 1))
      failures.push(await shrinkFailure(seed, result));
    if (options.progressEvery && summary.schedules % options.progressEvery === 0)
      options.onProgress?.(summary);
  }
  return { summary, failures };
}

/** Replays one seed exactly; when it fails, shrinks it as well. */
export async function replay(seed: number): Promise<{ result: ScheduleResult; failure: Failure | null }> {
  const path = simDatabasePath(`seed-${seed}`);
  const result = await runSchedule(generateSchedule(seed), path);
  return { result, failure: result.violation ? await shrinkFailure(seed, result) : null };
}

async function shrinkFailure(seed: number, result: ScheduleResult): Promise<Failure> {
  const path = simDatabasePath(`shrink-${seed}`);
  const schedule = generateSchedule(seed);
  const shrunk = await shrink(schedule, result.violation!, path);
  const shrunkResult = await runSchedule(shrunk, path);
  return { seed, result, shrunk, shrunkResult };
}

/** What a failing schedule prints: its seed, the invariant, the shrunk trace, the replay command. */
export function describeFailure(failure: Failure): string {
  const { violation } = failure.result;
  const original = generateSchedule(failure.seed);
  return [
    `FAILED seed ${failure.seed}: ${violation?.invariant}: ${violation?.detail}`,
    `shrunk from ${original.steps.length} steps and ${original.jobs.length} jobs to ${failure.shrunk.steps.length} steps and ${failure.shrunk.jobs.length} jobs:`,
    formatTrace(failure.shrunkResult.trace),
    `replay: npm run sim -- --seed ${failure.seed}${mutantFlag()}`,
  ].join("\n");
}

/** The `--mutant` flag to replay with, when the run was against a deliberately broken reducer. */
function mutantFlag(): string {
  const mutant = process.env.FINALITY_SIM_MUTANT;
  return mutant ? ` --mutant ${mutant}` : "";
}
