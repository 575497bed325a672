import pg from "pg";
import {
  createSettlementSignal,
  type SettlementReads,
  type SettlementRow,
  settlementFromRow,
  settlementPageSql,
} from "../settlement-feed.js";
import { fromTime, type JobRow, jobFromRow } from "./postgres-rows.js";

type Read = <T>(what: string, text: string, values?: readonly unknown[]) => Promise<T[] & { count: number }>;

/** The feed is read again this often while someone waits: the fallback when LISTEN is down. */
const POLL_MS = 2000;
/** The LISTEN connection is opened again after a failure this long after, doubling up to 30 s. */
const RELISTEN_MIN_MS = 250;
const CHANNEL = "finality_settlements";

/**
 * The settlement feed on PostgreSQL (migrations 0007 and 0016). A settling commit writes its rows
 * unnumbered and takes no lock; a read first numbers every row committed since the last one
 * (`finality_number_settlements()`, one short transaction under the schema's advisory lock), then
 * reads numbered rows only. A row of a transaction still in flight is invisible to the numbering,
 * so it is numbered after every row a reader has already passed.
 *
 * Waiters are woken by the NOTIFY each settling commit sends (any replica's, this one's too), on
 * one connection of its own opened at the first wait; a slow poll of the newest number stands
 * behind it, for the moments that connection is down.
 */
export function createPostgresSettlements(
  read: Read,
  options: { url: string; schema?: string | undefined; settlementPollMs?: number | undefined },
) {
  let closed = false;
  const signal = createSettlementSignal(() => numberSettlements(read), options.settlementPollMs ?? POLL_MS);
  const listener = createListener(
    options,
    () => signal.wakeAll(),
    () => closed,
  );

  const reads: SettlementReads = {
    async readSettlements(query) {
      await numberSettlements(read);
      const { sql, values } = settlementPageSql(query, (n) => `$${n}`);
      const rows = await read<SettlementRow<Date>>(
        "readSettlements",
        `SELECT * FROM settlements ${sql}`,
        values,
      );
      const jobs = await currentJobs(read, rows);
      const items = rows.map((row) =>
        settlementFromRow(
          row,
          fromTime(row.settled_at),
          jobs.get(`${row.provider}\u0000${row.job_id}`) ?? null,
        ),
      );
      return { items, cursor: items.at(-1)?.cursor ?? query.after ?? null };
    },
    settlementCommitted(abort?: AbortSignal) {
      listener.start();
      return signal.wait(abort);
    },
  };
  return {
    reads,
    async close() {
      closed = true;
      signal.close();
      await listener.stop();
    },
  };
}

/**
 * Numbers every settlement committed unnumbered so far (migration 0016) and answers the newest
 * number (0: none). Cheap when there is nothing to number: the partial index of unnumbered rows is
 * empty, and a transaction that wrote nothing flushes no WAL.
 */
export async function numberSettlements(read: Read): Promise<number> {
  const [row] = await read<{ n: string }>("numberSettlements", "SELECT finality_number_settlements() AS n");
  return Number(row?.n ?? 0);
}

/** The settled jobs as they are now, by provider and id (retention may have deleted some). */
async function currentJobs(read: Read, rows: readonly SettlementRow<Date>[]) {
  const found = new Map<string, ReturnType<typeof jobFromRow>>();
  if (rows.length === 0) return found;
  const jobs = await read<JobRow>(
    "readSettlementJobs",
    `SELECT j.* FROM jobs j JOIN unnest($1::text[], $2::text[]) AS k(provider, id)
       ON j.provider = k.provider AND j.id = k.id`,
    [rows.map((r) => r.provider), rows.map((r) => r.job_id)],
  );
  for (const row of jobs) found.set(`${row.provider}\u0000${row.id}`, jobFromRow(row));
  return found;
}

/**
 * One LISTEN connection, opened on demand, opened again with backoff when it fails. Every
 * (re)connect wakes the waiters too: notifications sent while it was down are lost.
 */
function createListener(
  options: { url: string; schema?: string | undefined },
  notified: () => void,
  isClosed: () => boolean,
) {
  let client: pg.Client | null = null;
  let starting = false;
  let backoffMs = RELISTEN_MIN_MS;
  let retry: ReturnType<typeof setTimeout> | null = null;

  async function connect(): Promise<void> {
    // Named with its schema, so that an operator (or a test) can tell one ledger's listener from another's.
    const name = `finality-settlements ${options.schema ?? ""}`.trim().slice(0, 63);
    const next = new pg.Client({ connectionString: options.url, application_name: name });
    next.on("error", () => failed(next));
    next.on("end", () => failed(next));
    try {
      await next.connect();
      const schema =
        options.schema ??
        ((await next.query<{ s: string }>("SELECT current_schema() AS s")).rows[0]?.s as string);
      next.on("notification", (message) => {
        if (message.channel === CHANNEL && message.payload === schema) notified();
      });
      await next.query(`LISTEN ${CHANNEL}`);
      if (isClosed()) return void (await next.end().catch(() => {}));
      client = next;
      backoffMs = RELISTEN_MIN_MS;
      notified();
    } catch {
      failed(next);
    } finally {
      starting = false;
    }
  }

  function failed(which: pg.Client): void {
    if (client !== null && client !== which) return;
    client = null;
    which.end().catch(() => {});
    if (isClosed() || retry !== null) return;
    retry = setTimeout(() => {
      retry = null;
      start();
    }, backoffMs);
    retry.unref();
    backoffMs = Math.min(30_000, backoffMs * 2);
  }

  function start(): void {
    if (client !== null || starting || retry !== null || isClosed()) return;
    starting = true;
    void connect();
  }

  return {
    start,
    async stop() {
      if (retry !== null) clearTimeout(retry);
      retry = null;
      const current = client;
      client = null;
      await current?.end().catch(() => {});
    },
  };
}
