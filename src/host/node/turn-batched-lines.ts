/** The part of a pino destination (SonicBoom) that `serve` writes through. */
export interface LineDestination<Chunk = string> {
  write(chunk: Chunk): unknown;
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
 *
 * With `bytes`, a turn's lines go out as one UTF-8 Buffer, for a SonicBoom in `contentMode:
 * "buffer"`: in its string mode SonicBoom still measured each turn's string (`Buffer.byteLength`)
 * and, once written, encoded it again only to cut off the bytes written (`releaseWritingBuf`),
 * ~20,000 instructions a webhook in all; a Buffer is encoded once and cut with `subarray`.
 */
export function turnBatchedLines(destination: LineDestination): BatchedLines;
export function turnBatchedLines(
  destination: LineDestination<Uint8Array>,
  options: { bytes: true },
): BatchedLines;
export function turnBatchedLines(
  destination: LineDestination<string> | LineDestination<Uint8Array>,
  options: { bytes?: boolean } = {},
): BatchedLines {
  const hand: (text: string) => unknown = options.bytes
    ? (text) => (destination as LineDestination<Uint8Array>).write(Buffer.from(text, "utf8"))
    : (text) => (destination as LineDestination<string>).write(text);
  let pending = "";
  let scheduled = false;
  const drain = () => {
    scheduled = false;
    if (pending === "") return;
    const text = pending;
    pending = "";
    hand(text);
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

/** What `serve` logs through: lines in, a turn's worth out. */
type BatchedLines = LineDestination & {
  /** Writes what is pending and drops the exit hook (the service stopped). */
  detach(): void;
};

// One exit listener for every destination in the process (tests start many services).
const exitHooks = new Set<() => void>();
let exitHooked = false;
