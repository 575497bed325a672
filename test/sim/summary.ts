import { INVARIANTS } from "./invariants.js";
import type { ScheduleResult } from "./run-schedule.js";
import { CONFIG_BUCKETS } from "./sim-config.js";
import { FAULT_KINDS, type FaultKind } from "./sim-types.js";

/** Totals over many schedules, for the table `npm run sim` prints and the tests assert on. */
export class Summary {
  schedules = 0;
  chaosSteps = 0;
  healTicks = 0;
  checks = 0;
  transactions = 0;
  restarts = 0;
  jobs = 0;
  runs = 0;
  effectsApplied = 0;
  acked = 0;
  readonly faults = new Map<FaultKind, number>(FAULT_KINDS.map((k) => [k, 0]));
  /** Schedules per configuration bucket ("dimension=value"). */
  readonly configDraws = new Map<string, number>(CONFIG_BUCKETS.map((b) => [b, 0]));
  readonly violations = new Map<string, number>(INVARIANTS.map((k) => [k, 0]));
  readonly failedSeeds: number[] = [];
  private readonly started = performance.now();

  add(result: ScheduleResult): void {
    this.schedules++;
    this.chaosSteps += result.chaosSteps;
    this.healTicks += result.healTicks;
    this.checks += result.checks;
    this.transactions += result.transactions;
    this.restarts += result.restarts;
    this.jobs += result.jobs;
    this.runs += result.runs;
    this.effectsApplied += result.effectsApplied;
    this.acked += result.acked;
    for (const bucket of result.configBuckets)
      this.configDraws.set(bucket, (this.configDraws.get(bucket) ?? 0) + 1);
    for (const [kind, n] of result.faults) this.faults.set(kind, (this.faults.get(kind) ?? 0) + n);
    if (result.violation) {
      const name = result.violation.invariant;
      this.violations.set(name, (this.violations.get(name) ?? 0) + 1);
      this.failedSeeds.push(result.seed);
    }
  }

  get totalViolations(): number {
    return [...this.violations.values()].reduce((a, b) => a + b, 0);
  }

  get totalFaults(): number {
    return [...this.faults.values()].reduce((a, b) => a + b, 0);
  }

  get elapsedSeconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  /** A Markdown table: the same text goes to the terminal and into docs. */
  table(command: string): string {
    const n = (value: number) => value.toLocaleString("en-US");
    const lines = [
      `Command: \`${command}\` — ${this.elapsedSeconds.toFixed(1)} s`,
      "",
      "| measure | count |",
      "|---|---:|",
      `| schedules | ${n(this.schedules)} |`,
      `| steps (chaos steps + heal ticks) | ${n(this.chaosSteps + this.healTicks)} (${n(this.chaosSteps)} + ${n(this.healTicks)}) |`,
      `| invariant checks after a step | ${n(this.checks)} |`,
      `| store transactions | ${n(this.transactions)} |`,
      `| process restarts from the file | ${n(this.restarts)} |`,
      `| provider jobs / worker runs | ${n(this.jobs)} / ${n(this.runs)} |`,
      `| webhooks acknowledged (2xx) | ${n(this.acked)} |`,
      `| effects applied by the receiver | ${n(this.effectsApplied)} |`,
      `| faults injected | ${n(this.totalFaults)} |`,
      `| invariant violations | ${n(this.totalViolations)} |`,
      "",
      "| fault | injected |",
      "|---|---:|",
      ...[...this.faults].map(([kind, count]) => `| ${kind} | ${n(count)} |`),
      "",
      "| configuration drawn | schedules |",
      "|---|---:|",
      ...[...this.configDraws].map(([bucket, count]) => `| ${bucket} | ${n(count)} |`),
      "",
      "| invariant | violations |",
      "|---|---:|",
      ...[...this.violations].map(([name, count]) => `| ${name} | ${n(count)} |`),
    ];
    if (this.failedSeeds.length > 0)
      lines.push(
        "",
        `Failing seeds: ${this.failedSeeds.slice(0, 20).join(", ")}${this.failedSeeds.length > 20 ? ", ..." : ""}`,
      );
    return lines.join("\n");
  }
}

/** The trace to print for a failing schedule: every chaos step, the start and the end of the heal. */
export function formatTrace(trace: readonly string[], healLines = 40): string {
  const healAt = trace.findIndex((line) => line.startsWith("heal at"));
  if (healAt < 0) return trace.join("\n");
  const heal = trace.slice(healAt + 1);
  if (heal.length <= healLines) return trace.join("\n");
  const head = Math.floor(healLines / 3);
  const tail = healLines - head;
  return [
    ...trace.slice(0, healAt + 1 + head),
    `  ... ${heal.length - healLines} heal lines ...`,
    ...heal.slice(-tail),
  ].join("\n");
}
