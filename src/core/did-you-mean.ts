/**
 * "did you mean …?" for a misspelt name: the known name closest to `word` by edit distance
 * (insertions, deletions, substitutions and swaps of two neighbours), if it is close enough to
 * be a typo rather than a different word.
 */
function closestName(word: string, known: readonly string[]): string | undefined {
  const lower = word.toLowerCase();
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of known) {
    const distance = editDistance(lower, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  // One edit in four, at least one: "pol" → "poll", "webhooks" → "webhook", not "url" → "kind".
  const allowed = Math.max(1, Math.floor(Math.max(word.length, best?.length ?? 0) / 4));
  return best !== undefined && bestDistance <= allowed ? best : undefined;
}

/** The hint appended to an "unknown field" message: ` (did you mean "poll"?)`, or nothing. */
export function didYouMean(word: string, known: readonly string[]): string {
  const closest = closestName(word, known);
  return closest === undefined ? "" : ` (did you mean "${closest}"?)`;
}

/** Optimal string alignment distance (Damerau–Levenshtein without repeated edits of a substring). */
function editDistance(a: string, b: string): number {
  const rows: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = rows[i] as number[];
      const above = rows[i - 1] as number[];
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        row[j] = Math.min(row[j] as number, ((rows[i - 2] as number[])[j - 2] as number) + 1);
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
}
