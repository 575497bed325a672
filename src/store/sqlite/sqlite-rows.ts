import { ATTEMPTS, EFFECTS, EVENTS, JOBS, RUN_EVENTS, RUNS } from "../tables.js";

/**
 * Row ↔ object on SQLite (and a Durable Object's SQLite), compiled from the mapping lines in
 * ../tables.ts: named parameters (`@column`) in, rows by column name out.
 */
export type { AttemptRow, EffectRow, EventRow, JobRow, RunEventRow, RunRow } from "../tables.js";

export const { fromRow: jobFromRow, params: jobParams } = JOBS.sqlite;
export const { fromRow: eventFromRow, params: eventParams } = EVENTS.sqlite;
export const { fromRow: effectFromRow, params: effectParams } = EFFECTS.sqlite;
export const { fromRow: runFromRow, params: runParams } = RUNS.sqlite;
export const { fromRow: attemptFromRow, params: attemptParams } = ATTEMPTS.sqlite;
export const { fromRow: runEventFromRow, params: runEventParams } = RUN_EVENTS.sqlite;
