// The ledger object's internal paths, in their own file: the router and the Worker's cron entry
// call them, and importing them from ledger-object.ts (which holds a router) made a cycle.

/** The path the Worker's cron trigger calls on the ledger object; never reachable from outside. */
export const TICK_PATH = "/__finality/tick";
/**
 * The counts of one shard (GET), which the Worker sums for `/metrics` and `/v1/shards`; with
 * `?counters=1` also its durable counters (`counters`, durable-counters.ts), for `/metrics`.
 */
export const STATS_PATH = "/__finality/stats";
