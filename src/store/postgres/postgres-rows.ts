import { ATTEMPTS, EFFECTS, EVENTS, JOBS, RUN_EVENTS, RUNS } from "../tables.js";

/**
 * Row ↔ object on PostgreSQL, compiled from the mapping lines in ../tables.ts: values in
 * column-list order (`$1` is the first column: position binding cannot drift), rows by column
 * name out. bigint columns arrive as numbers (see the `int8` type in postgres-client.ts), jsonb
 * columns arrive parsed, timestamptz as `Date`.
 */
export type { AttemptRow, EffectRow, EventRow, JobRow, RunEventRow, RunRow } from "../tables.js";
export { fromTime, toTime } from "./postgres-values.js";

export const { fromRow: jobFromRow, values: jobValues } = JOBS.postgres;
export const { fromRow: eventFromRow, values: eventValues } = EVENTS.postgres;
export const { fromRow: effectFromRow, values: effectValues } = EFFECTS.postgres;
export const { fromRow: runFromRow, values: runValues } = RUNS.postgres;
export const { fromRow: attemptFromRow, values: attemptValues } = ATTEMPTS.postgres;
export const { fromRow: runEventFromRow, values: runEventValues } = RUN_EVENTS.postgres;
