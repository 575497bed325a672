import type { Clock } from "../../core/clock.js";

/**
 * The database's clock, read from this process without a round trip per call: this machine's
 * clock plus the offset last measured against PostgreSQL's `clock_timestamp()`.
 *
 * Why: every replica writes lease and claim times (run leases, effect delivery leases, reconcile
 * claims) from its clock, and every replica compares them with its clock. A replica whose clock
 * is ahead by s would take other replicas' leases s early (two workers on one run, two deliveries
 * of one effect at once). On this clock every replica counts time as the one database does, so
 * what they write and compare agrees whatever their machines' clocks say. The time still flows
 * through the ledger's injected Clock, so fake clocks in tests are untouched.
 *
 * The error left is that of the best reading (at most half its round trip, which is kept only
 * when under `MAX_ROUND_TRIP_MS`) plus what this machine's clock drifts between readings.
 */
export interface DatabaseClock extends Clock {
  /** The database's clock minus this machine's, in ms, as last measured (null before any reading). */
  offsetMs(): number | null;
  /** How far off that offset may be, in ms: half the round trip of the reading it came from (null before any). */
  errorMs(): number | null;
  /** Measures the offset again (a few readings, the shortest round trip wins); never throws. */
  sync(): Promise<void>;
  /** Measures again every `intervalMs` until `stop()`. */
  start(intervalMs: number): void;
  stop(): void;
}

/** A reading whose round trip took longer says too little about when the database read its clock. */
const MAX_ROUND_TRIP_MS = 1000;
const READINGS_PER_SYNC = 3;

/**
 * `readDatabaseMs` returns the database's clock in epoch ms (`clock_timestamp()`); `local` is this
 * machine's clock (the system clock; a test offsets it to play a replica whose clock is wrong).
 */
export function databaseClock(readDatabaseMs: () => Promise<number>, local: Clock): DatabaseClock {
  let offset: number | null = null;
  let error: number | null = null;
  let timer: ReturnType<typeof setInterval> | null = null;
  let syncing: Promise<void> | null = null;

  async function reading(): Promise<{ offsetMs: number; roundTripMs: number }> {
    const sentAt = local.now();
    const started = performance.now();
    const databaseMs = await readDatabaseMs();
    const roundTripMs = performance.now() - started;
    // The database read its clock somewhere in the round trip: its middle is the best guess.
    return { offsetMs: databaseMs - (sentAt + roundTripMs / 2), roundTripMs };
  }

  async function measure(): Promise<void> {
    let best: { offsetMs: number; roundTripMs: number } | null = null;
    for (let i = 0; i < READINGS_PER_SYNC; i++) {
      const next = await reading().catch(() => null);
      // The database is not answering: try again at the next interval, not twice more now.
      if (next === null) break;
      if (best === null || next.roundTripMs < best.roundTripMs) best = next;
    }
    // Whole milliseconds: times are stored and compared at that precision.
    if (best !== null && best.roundTripMs <= MAX_ROUND_TRIP_MS) {
      offset = Math.round(best.offsetMs);
      // Rounding to whole ms adds up to half of one.
      error = best.roundTripMs / 2 + 0.5;
    }
  }

  function sync(): Promise<void> {
    syncing ??= measure().finally(() => {
      syncing = null;
    });
    return syncing;
  }

  return {
    now: () => local.now() + (offset ?? 0),
    offsetMs: () => offset,
    errorMs: () => error,
    sync,
    start(intervalMs) {
      if (timer !== null) return;
      timer = setInterval(() => void sync(), intervalMs);
      timer.unref?.();
    },
    stop() {
      if (timer !== null) clearInterval(timer);
      timer = null;
    },
  };
}

/**
 * The earliest the database's clock may read now: its estimate less the estimate's error, or
 * null before any reading. A deadline on the database's clock computed from it is never later
 * than meant (postgres-client.ts, finality_before).
 */
export function earliestDatabaseNow(clock: DatabaseClock): number | null {
  const error = clock.errorMs();
  return clock.offsetMs() === null || error === null ? null : clock.now() - error;
}
