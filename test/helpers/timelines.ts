import { type Random, seededRandom } from "../../src/core/clock.js";
import type { Observation } from "../../src/core/model.js";
import { SOURCES, TERMINAL_STATES, type TerminalState } from "../../src/core/states.js";
import { T0 } from "./records.js";

export interface Timeline {
  id: string;
  final: TerminalState;
}

export interface GeneratedWorkload {
  timelines: Timeline[];
  observations: Observation[];
  /** Delivery ids sent twice with the same id: the second one is a redelivery. */
  redeliveredIds: Set<string>;
}

const pick = <T>(random: Random, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;

/**
 * For each job, its true timeline pending → running (seq 1..runningSteps) → one terminal state,
 * one observation per step, each with a unique delivery id; then `duplicateCount` repeats of
 * random observations (half with their delivery id, half as new deliveries), all shuffled.
 */
export function generateWorkload(options: {
  seed: number;
  jobs: number;
  runningSteps: number;
  duplicateCount: number;
}): GeneratedWorkload {
  const random = seededRandom(options.seed);
  const timelines: Timeline[] = [];
  const base: Observation[] = [];
  for (let j = 0; j < options.jobs; j++) {
    const id = `job-${String(j).padStart(5, "0")}`;
    const final = pick(random, TERMINAL_STATES);
    timelines.push({ id, final });
    const states = ["pending", ...Array.from({ length: options.runningSteps }, () => "running"), final];
    states.forEach((state, step) => {
      // Most carry seq; the rest only updateTime, as some providers send.
      const withSeq = random() < 0.8;
      base.push({
        provider: "generic",
        id,
        state,
        source: pick(random, SOURCES),
        ...(withSeq ? { seq: step } : {}),
        updateTime: T0 + step * 1_000,
        deliveryId: `d-${id}-${step}`,
      });
    });
  }
  const redeliveredIds = new Set<string>();
  const duplicates: Observation[] = [];
  const chosen = shuffle(random, base.slice()).slice(0, options.duplicateCount);
  chosen.forEach((observation, i) => {
    if (i % 2 === 0) {
      redeliveredIds.add(observation.deliveryId!);
      duplicates.push({ ...observation });
    } else {
      duplicates.push({ ...observation, deliveryId: `${observation.deliveryId}-again` });
    }
  });
  return { timelines, observations: shuffle(random, [...base, ...duplicates]), redeliveredIds };
}

/** Fisher–Yates with the given random source. */
export function shuffle<T>(random: Random, items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}
