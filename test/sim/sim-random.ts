import type { Random } from "../../src/core/clock.js";

/** The simulator's draws from a seeded source. */

export const int = (random: Random, min: number, max: number) => min + Math.floor(random() * (max - min + 1));

/** Picks a key of `weights` with probability proportional to its weight. */
export function weighted<K extends string>(random: Random, weights: Readonly<Record<K, number>>): K {
  const entries = Object.entries(weights) as [K, number][];
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  let r = random() * total;
  for (const [key, w] of entries) {
    r -= w;
    if (r < 0) return key;
  }
  return entries[entries.length - 1]![0];
}
