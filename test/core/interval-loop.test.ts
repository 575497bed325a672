import { describe, expect, it } from "vitest";
import { createIntervalLoop } from "../../src/core/interval-loop.js";

/** A pass the test ends by hand, and a promise for its start. */
function controlledPasses() {
  const started: (() => void)[] = [];
  let release: (() => void) | null = null;
  let inFlight = 0;
  let peak = 0;
  let count = 0;
  const waiters: ((n: number) => void)[] = [];
  const pass = () =>
    new Promise<void>((resolve, reject) => {
      count++;
      inFlight++;
      peak = Math.max(peak, inFlight);
      for (const w of waiters.splice(0)) w(count);
      release = () => {
        inFlight--;
        if (count === 2) reject(new Error("second pass fails"));
        else resolve();
      };
      for (const s of started.splice(0)) s();
    });
  return {
    pass,
    /** Resolves when pass number `n` has started. */
    started: (n: number) =>
      new Promise<void>((resolve) => {
        if (count >= n) return resolve();
        const wait = (c: number) => (c >= n ? resolve() : waiters.push(wait));
        waiters.push(wait);
      }),
    finish: () => release?.(),
    get peak() {
      return peak;
    },
    get count() {
      return count;
    },
  };
}

describe("the interval loop behind retention and the lease sweeper", () => {
  it("runs one pass at a time, reports a failed pass and goes on, and stop waits for the pass in flight", async () => {
    const passes = controlledPasses();
    const errors: string[] = [];
    const loop = createIntervalLoop(passes.pass, 1, (error) => errors.push(error.message));
    loop.start();
    loop.start(); // a second start changes nothing
    await passes.started(1);
    passes.finish();
    await passes.started(2);
    passes.finish(); // this one fails
    await passes.started(3);
    expect(errors).toEqual(["second pass fails"]);
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await Promise.resolve();
    expect(stopped).toBe(false); // pass 3 is still running
    passes.finish();
    await stopping;
    expect(passes.peak).toBe(1);
    const after = passes.count;
    await new Promise((resolve) => setTimeout(resolve, 20)); // long enough for several more intervals
    expect(passes.count).toBe(after);
  });

  it("waits at least the delay a pass asks for (a Retry-After), and tells a pass when the loop is stopping", async () => {
    const starts: number[] = [];
    let stopSeen: boolean | null = null;
    let loop: ReturnType<typeof createIntervalLoop> | null = null;
    const second = new Promise<void>((resolve) => {
      loop = createIntervalLoop(async (isRunning) => {
        starts.push(performance.now());
        if (starts.length === 1) return 80;
        stopSeen = isRunning();
        resolve();
        return undefined;
      }, 1);
    });
    loop!.start();
    await second;
    await loop!.stop();
    expect((starts[1] as number) - (starts[0] as number)).toBeGreaterThanOrEqual(79);
    expect(stopSeen).toBe(true);
  });
});
