/** The part of a pino destination (SonicBoom) that `serve` writes through. */
export interface LineDestination {
  write(text: string): unknown;
  flush(callback?: (error?: Error) => void): void;
  flushSync(): void;
}

/**
 * The lines written in one turn of the event loop, handed to `destination` as one string at the
 * turn's end (and before any flush). SonicBoom measures its whole pending buffer in UTF-8 on every
 * write, after V8 has flattened it: with `serve`'s 4 KiB buffer, each request line cost copying
 * and scanning ~2 KB (~15,000 instructions a webhook, bench/callgrind-js.js); a group commit
 * answers its callers in one turn, so their lines now cost that once.
 *
 * Every line, pino's own and the request lines alike, comes through here, so their order holds.
 * A line waits at most for the end of its turn; if the process exits before that (an exit called
 * in the same turn), the exit hook writes it, synchronously, as SonicBoom's own hook does.
 */
export function turnBatchedLines(destination: LineDestination): LineDestination & {
  /** Writes what is pending and drops the exit hook (the service stopped). */
  detach(): void;
} {
  let pending = "";
  let scheduled = false;
  const drain = () => {
    scheduled = false;
    if (pending === "") return;
    const text = pending;
    pending = "";
    destination.write(text);
  };
  const atExit = () => {
    if (pending === "") return;
    drain();
    try {
      destination.flushSync();
    } catch {
      // Not open yet, or already ended: nothing more can be written at exit.
    }
  };
  exitHooks.add(atExit);
  if (!exitHooked) {
    exitHooked = true;
    process.once("exit", () => {
      for (const hook of exitHooks) hook();
    });
  }
  return {
    write(text) {
      pending += text;
      if (!scheduled) {
        scheduled = true;
        setImmediate(drain);
      }
      return true;
    },
    flush(callback) {
      drain();
      destination.flush(callback);
    },
    flushSync() {
      drain();
      destination.flushSync();
    },
    detach() {
      drain();
      exitHooks.delete(atExit);
    },
  };
}

// One exit listener for every destination in the process (tests start many services).
const exitHooks = new Set<() => void>();
let exitHooked = false;
