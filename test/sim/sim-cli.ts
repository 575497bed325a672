import { register } from "node:module";
import { parseArgs } from "node:util";
import type { HookData } from "./mutant/mutant-hooks.js";

/**
 * `npm run sim -- --schedules N [--start S]`: runs N schedules and prints the summary table.
 * `npm run sim -- --seed N`: replays one schedule exactly, with its trace, shrunk if it fails.
 * `--mutant NAME` runs against a deliberately broken reducer (test/sim/mutant/mutants.ts), store
 * (store-mutants.ts), run service (process-mutants.ts) or other module (module-mutants.ts).
 */
const { values } = parseArgs({
  options: {
    seed: { type: "string" },
    schedules: { type: "string", default: "1000" },
    start: { type: "string", default: "1" },
    mutant: { type: "string" },
    trace: { type: "boolean", default: false },
  },
});

if (values.mutant !== undefined) {
  process.env.FINALITY_SIM_MUTANT = values.mutant;
  // A store or process mutant is applied by sim-process.ts itself; a reducer or module mutant
  // needs the module hook, told which module to swap.
  const { isStoreMutantName } = await import("./mutant/store-mutants.js");
  const { isProcessMutantName } = await import("./mutant/process-mutants.js");
  const { isModuleMutantName, MODULE_MUTANTS } = await import("./mutant/module-mutants.js");
  const data: HookData | undefined = isModuleMutantName(values.mutant)
    ? {
        module: MODULE_MUTANTS[values.mutant].module,
        mutant: `./mutant-${MODULE_MUTANTS[values.mutant].module.replace(/^.*\//, "").replace(/\.js$/, "")}.js`,
      }
    : undefined;
  if (!isStoreMutantName(values.mutant) && !isProcessMutantName(values.mutant))
    register("./mutant/mutant-hooks.js", { parentURL: import.meta.url, data });
}
// Imported after the hook is registered, so that the engine loads the mutant reducer.
const { describeFailure, replay, simulate } = await import("./simulate.js");
const { formatTrace } = await import("./summary.js");

const mutant = values.mutant ? ` --mutant ${values.mutant}` : "";
if (values.seed !== undefined) {
  const seed = Number(values.seed);
  const { result, failure } = await replay(seed);
  if (failure) {
    if (values.trace) console.log(formatTrace(result.trace), "\n");
    console.log(describeFailure(failure));
    process.exitCode = 1;
  } else {
    console.log(formatTrace(result.trace, values.trace ? 1_000_000 : 40));
    console.log(
      `\nseed ${seed}: every invariant held (${result.chaosSteps} steps, ${result.healTicks} heal ticks, ${[...result.faults.values()].reduce((a, b) => a + b, 0)} faults)`,
    );
  }
} else {
  const count = Number(values.schedules);
  const start = Number(values.start);
  const { summary, failures } = await simulate({
    start,
    count,
    shrinkFirst: 1,
    progressEvery: 5_000,
    onProgress: (s) =>
      process.stderr.write(
        `${s.schedules}/${count} schedules, ${s.totalViolations} violations, ${s.elapsedSeconds.toFixed(0)} s\n`,
      ),
  });
  console.log(
    summary.table(`npm run sim -- --schedules ${count}${start !== 1 ? ` --start ${start}` : ""}${mutant}`),
  );
  for (const failure of failures) console.log(`\n${describeFailure(failure)}`);
  if (summary.totalViolations > 0) process.exitCode = 1;
}
