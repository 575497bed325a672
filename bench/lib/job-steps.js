/**
 * The benches' webhook workload: `count` observations of jobs in blocks of 1,000, each job running
 * (seq 1), running (seq 2), then succeeded (seq 3) with a small result, so that one in three is
 * terminal; every job id (`<prefix>-job-<n>`) is unique to its run. `make` builds each item from
 * the step and its position.
 */
export function jobSteps(prefix, count, make) {
  const out = [];
  const steps = [
    ["running", 1],
    ["running", 2],
    ["succeeded", 3],
  ];
  for (let base = 0; out.length < count; base += 1000) {
    for (const [state, seq] of steps) {
      for (let j = 0; j < 1000 && out.length < count; j++) {
        const jobId = `${prefix}-job-${base + j}`;
        const result = state === "succeeded" ? { url: `https://example.com/out/${jobId}.json` } : undefined;
        out.push(make({ jobId, state, seq, result }, out.length));
      }
    }
  }
  return out;
}
