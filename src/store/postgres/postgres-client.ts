import pg from "pg";
import { FinalityError, isFinalityError, toError } from "../../core/errors.js";

/**
 * The store's view of the driver (node-postgres, `pg`; docs/postgres-driver.md says why): text
 * with `$n` placeholders and an array of values, answered with the rows and `count` (rows
 * affected): `unsafe(text, values, { prepare: true })` (a named prepared statement),
 * `begin(mode, work)` and `savepoint(work)`. The names were kept from the first driver the store
 * used, so the query code reads the same on both.
 */
export interface Queryable {
  unsafe<T = Record<string, unknown>>(
    text: string,
    values?: readonly unknown[],
    options?: QueryOptions,
  ): Promise<T[] & { count: number }>;
}

interface QueryOptions {
  prepare?: boolean;
  /**
   * In a transaction: may go out with its BEGIN, before BEGIN is answered (one round trip for
   * both). Only for a statement that writes nothing unless `IN_TRANSACTION` holds: were BEGIN to
   * fail, the statement would run on its own, outside any transaction, and commit.
   */
  withBegin?: boolean;
  /**
   * The last statement its work sends: whatever it answers, short of an error, the work sends
   * nothing after it and finishes without throwing. In a transaction that counts its works
   * (`TransactionSettings.worksLeft`), the COMMIT may go out right behind such statements, in the
   * same write, before they are answered (one round trip less: `TxSql.commitsAhead`). Every check
   * of the answer that could fail the work must then be made by the statement itself, as an error:
   * an error aborts the transaction, and the COMMIT behind it answers ROLLBACK.
   */
  last?: boolean;
  /**
   * Sent in the same write as its work's `last` statement, which it does not stand for: the
   * COMMIT may go out behind both, so this one too makes every check of its answer itself, as an
   * error. (A run's attempt and run rows, written beside the mirror job's last statement.)
   */
  beside?: boolean;
}

/**
 * True inside a transaction this client began (set by its BEGIN, `SET LOCAL`, so gone at its
 * end), false or null outside one: what a `withBegin` statement's writes are conditioned on.
 */
export const IN_TRANSACTION = "current_setting('finality.in_transaction', true) = 'on'";

/**
 * The SQLSTATE of finality_expect (migration 0013): a `last` statement (QueryOptions.last) found
 * its work not done after all. Its transaction is aborted; the work runs again without the COMMIT
 * going ahead of it.
 */
export const NOT_LAST = "FNL01";

/** One open transaction on one pooled connection. */
export interface TxSql extends Queryable {
  /** Runs `work` inside a SAVEPOINT: a failure rolls back only what `work` did. */
  savepoint<T>(work: (sp: TxSql) => Promise<T>): Promise<T>;
  /**
   * True when the COMMIT may go out behind a `last` statement, before its answer: such a
   * statement must then carry its own checks, as errors (see QueryOptions.last).
   */
  readonly commitsAhead: boolean;
}

/** What the pool has counted since it was created, for /metrics. */
export interface PoolStats {
  /** Connections open, idle, and callers waiting for one right now. */
  total: number;
  idle: number;
  waiting: number;
  /** Checkouts that found no idle connection and had to wait (or open one). */
  waits: number;
  /** Checkouts that gave up after `poolTimeoutSeconds` (the caller got store-unavailable). */
  waitTimeouts: number;
  /** Statements ended by statement_timeout, lock waits ended by lock_timeout. */
  statementTimeouts: number;
  lockTimeouts: number;
  /** Connections that died under a caller (cut, server restart, idle-in-transaction timeout). */
  connectionErrors: number;
}

/** Settings of one transaction only (`SET LOCAL`, sent with its BEGIN: no extra round trip). */
/** A statement's answer: its rows, with the count and command tag. */
type Answer<T> = Promise<T[] & { count: number; command?: string | undefined }>;

/** The socket under a pg connection: its writes held back and sent as one (`together`). */
interface Corkable {
  cork?: () => void;
  uncork?: () => void;
}

interface TransactionSettings {
  /**
   * lock_timeout of this transaction, in ms: the group commit's short wait for a row lock. A lock
   * it did not get in time is expected there, so it is not counted in `lockTimeouts`.
   */
  lockTimeoutMs?: number;
  /**
   * This transaction's client-side deadline per statement, in ms, instead of the pool's
   * `queryTimeoutMs`; `Infinity` for none (migrations wait on another replica's for as long as it takes).
   */
  queryTimeoutMs?: number;
  /**
   * Several works run in this transaction at once (the group commit's callers): their statements
   * are held while any answer is awaited and then sent together, in one write, so that the
   * statements each work sends once it has its answer share one round trip with the others'.
   */
  together?: boolean;
  /**
   * (`together` only.) How many of the works sharing the transaction may still send a statement,
   * or -1 once one of them has failed. When every statement held is a `last` one or sent `beside`
   * one, and the `last` ones are as many as this, the COMMIT goes out with them (QueryOptions.last):
   * no work is left to send more.
   */
  worksLeft?: () => number;
}

export interface Sql extends Queryable {
  begin<T>(mode: string, work: (tx: TxSql) => Promise<T>, settings?: TransactionSettings): Promise<T>;
  begin<T>(work: (tx: TxSql) => Promise<T>): Promise<T>;
  stats(): PoolStats;
  /** How long the longest-waiting caller has waited for a pooled connection (0: none waits). */
  starvedMs(): number;
  end(options?: { timeout?: number }): Promise<void>;
}

interface PostgresClientOptions {
  url: string;
  schema?: string | undefined;
  max?: number | undefined;
  /** application_name of every connection ("finality"): how an operator finds them in pg_stat_activity. */
  applicationName?: string | undefined;
  idleTimeoutSeconds?: number | undefined;
  /** Opening a connection and waiting for a pooled one, each (5). */
  connectTimeoutSeconds?: number | undefined;
  /** statement_timeout (15 s): a statement running longer is cancelled, the caller gets a 503. */
  statementTimeoutMs?: number | undefined;
  /** lock_timeout (5 s): waiting longer for a row lock (a frozen peer holds it) gives a 503. */
  lockTimeoutMs?: number | undefined;
  /**
   * idle_in_transaction_session_timeout (10 s): the server ends a session whose transaction sat
   * idle this long (its process frozen or cut off), releasing its locks.
   */
  idleInTransactionTimeoutMs?: number | undefined;
  /**
   * How long this process waits for the answer to one statement before it gives the connection
   * up (statementTimeoutMs + 5 s): the bound when the server or the network goes silent, which
   * the server-side timeouts cannot give. The caller gets a 503; the connection is destroyed.
   */
  queryTimeoutMs?: number | undefined;
  /**
   * The earliest the database's clock may read now, in epoch ms (postgres-clock.ts, its
   * estimate less its error), or null while unknown. A COMMIT goes ahead of the answers it
   * follows (QueryOptions.last) only when this is known: the database is told by when it must
   * commit (finality_before), so that a transaction this client gave up on never commits later.
   */
  databaseNow?: (() => number | null) | undefined;
}

/** How much longer than statement_timeout the client waits by default: the server's cancel comes first. */
const QUERY_DEADLINE_MARGIN_MS = 5_000;

/**
 * What a COMMIT that goes ahead leaves of the client's deadline for itself (its flush to disk)
 * and for its answer's way back: a quarter of the deadline, at most this.
 */
const MAX_COMMIT_MARGIN_MS = 1_000;

export const POSTGRES_TIMEOUT_DEFAULTS = {
  connectTimeoutSeconds: 5,
  statementTimeoutMs: 15_000,
  lockTimeoutMs: 5_000,
  idleInTransactionTimeoutMs: 10_000,
} as const;

// A schema name goes into search_path and an advisory-lock key: plain identifiers only, so that
// no quoting mistake can turn it into something else.
const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

function assertSchemaName(schema: string): void {
  if (!SCHEMA_NAME.test(schema)) {
    throw new FinalityError("invalid-config", `schema "${schema}" must be a plain SQL identifier`, {
      details: { schema },
    });
  }
}

// bigint (identity cursors, counts, seqs, ms) as a JS number: every value Finality stores is a
// safe integer, and `execute` callers then see the same numbers as on SQLite. Per pool, not the
// global pg.types, so that an application's own pg use is not changed.
const INT8 = 20;
const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8 && format !== "binary"
      ? Number
      : pg.types.getTypeParser(oid, format as "text")) as typeof pg.types.getTypeParser,
};

// Named prepared statements: each connection parses a text once. Names are per text, process-wide.
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `finality_${statementNames.size + 1}`;
    statementNames.set(text, name);
  }
  return name;
}

/** `?application_name=` of a postgres:// URL: an operator may name each replica's sessions so. */
function applicationNameIn(url: string): string | undefined {
  try {
    return new URL(url).searchParams.get("application_name") ?? undefined;
  } catch {
    return undefined;
  }
}

// node-postgres's own connection failures carry no code, only these messages (pg 8.23,
// lib/client.js and pg-pool). A socket error (ECONNRESET, ECONNREFUSED, ...) keeps its code.
const DRIVER_CONNECTION_MESSAGE =
  /Connection terminated|connection error and is not queryable|Client has already been connected|Client was closed|Query read timeout/;
const POOL_TIMEOUT_MESSAGE = /timeout exceeded when trying to connect/;

/** Gives the driver's code-less connection failures a code; anything else passes unchanged. */
function driverError(error: unknown): unknown {
  if (error instanceof pg.DatabaseError || !(error instanceof Error)) return error;
  if (typeof (error as { code?: unknown }).code === "string") return error;
  const code = POOL_TIMEOUT_MESSAGE.test(error.message)
    ? "POOL_TIMEOUT"
    : DRIVER_CONNECTION_MESSAGE.test(error.message)
      ? "CONNECTION_CLOSED"
      : undefined;
  if (code !== undefined) Object.defineProperty(error, "code", { value: code, enumerable: true });
  return error;
}

/**
 * One node-postgres pool. `search_path`, the time zone and the three timeouts are startup
 * parameters, so every pooled connection has them from its first statement.
 *
 * No driver error ends the process: an idle connection's socket error is emitted on the pool and
 * a checked-out one's on its client, and both have a listener here (an EventEmitter "error"
 * without one would throw); a query on a dead connection rejects its caller, and a transaction
 * whose connection failed destroys it instead of returning it to the pool.
 */
export function createClient(options: PostgresClientOptions): Sql {
  if (options.schema !== undefined) assertSchemaName(options.schema);
  const d = POSTGRES_TIMEOUT_DEFAULTS;
  const startup = [
    // Timestamps come back as "...+00", which every Date parser reads; a zone with a historical
    // offset in seconds (LMT) would not be.
    "-c TimeZone=UTC",
    `-c statement_timeout=${options.statementTimeoutMs ?? d.statementTimeoutMs}`,
    `-c lock_timeout=${options.lockTimeoutMs ?? d.lockTimeoutMs}`,
    `-c idle_in_transaction_session_timeout=${options.idleInTransactionTimeoutMs ?? d.idleInTransactionTimeoutMs}`,
    ...(options.schema === undefined ? [] : [`-c search_path="${options.schema}"`]),
  ];
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.max ?? 10,
    idleTimeoutMillis: (options.idleTimeoutSeconds ?? 30) * 1000,
    connectionTimeoutMillis: (options.connectTimeoutSeconds ?? d.connectTimeoutSeconds) * 1000,
    application_name: options.applicationName ?? applicationNameIn(options.url) ?? "finality",
    options: startup.join(" "),
    types,
    // A statement is sent without waiting for the answer to the one before (in order, each with
    // its own Sync): a transaction's BEGIN goes out with its first statement (withBegin).
    pipeline: true,
  });
  const queryTimeoutMs =
    options.queryTimeoutMs ?? (options.statementTimeoutMs ?? d.statementTimeoutMs) + QUERY_DEADLINE_MARGIN_MS;
  const counts = { waits: 0, waitTimeouts: 0, statementTimeouts: 0, lockTimeouts: 0, connectionErrors: 0 };
  // An idle connection died (cut, restart): the pool drops it; the next checkout opens another.
  pool.on("error", () => {});
  // A checked-out connection that dies between two statements (a FATAL from the server, a reset)
  // emits "error" on its client, which without a listener throws and ends the process. Its next
  // statement then fails with "not queryable", which the caller sees, and the client is destroyed.
  pool.on("connect", (client) => {
    client.on("error", () => {
      counts.connectionErrors++;
    });
  });

  function count(error: unknown): void {
    const state = error instanceof pg.DatabaseError ? error.code : (error as { code?: unknown }).code;
    if (state === "57014") counts.statementTimeouts++;
    else if (state === "55P03") counts.lockTimeouts++;
    else if (state === "POOL_TIMEOUT") counts.waitTimeouts++;
    else if (isConnectionError(error)) counts.connectionErrors++;
  }

  async function query<T>(
    client: pg.PoolClient,
    text: string,
    values: readonly unknown[] | undefined,
    prepare: boolean,
    settings: TransactionSettings = {},
  ): Promise<T[] & { count: number; command?: string | undefined }> {
    try {
      const answer = await new Promise<pg.QueryResult | pg.QueryResult[]>((resolve, reject) => {
        // A Query made from text (not from a config object, which node-postgres copies property by
        // property through their descriptors: ~23,000 instructions a statement) with its callback,
        // so that Client.query wraps it in no promise of its own. name and query_timeout are read
        // from it when it is sent, though pg's types do not say so.
        const submitted = new pg.Query(text, values as unknown[] | undefined, (error, result) =>
          error ? reject(error) : resolve(result as unknown as pg.QueryResult | pg.QueryResult[]),
        ) as pg.Query & { name?: string; query_timeout?: number };
        // node-postgres's read deadline ("Query read timeout"): without it a statement sent to a
        // silent server (frozen, or the network dropping packets) waits for ever.
        const deadline = settings.queryTimeoutMs ?? queryTimeoutMs;
        if (Number.isFinite(deadline)) submitted.query_timeout = deadline;
        // Parameterless text goes by the simple protocol, which allows many statements (migrations).
        if (prepare && values !== undefined && values.length > 0) submitted.name = statementName(text);
        client.query(submitted);
      });
      // Several statements in one simple-protocol text answer one result each: the last counts.
      const result = Array.isArray(answer) ? answer.at(-1) : answer;
      return Object.assign((result?.rows ?? []) as T[], {
        count: result?.rowCount ?? 0,
        command: result?.command,
      });
    } catch (error) {
      const mapped = driverError(error);
      const quietLock = settings.lockTimeoutMs !== undefined && sqlState(mapped) === "55P03";
      if (!quietLock) count(mapped);
      throw mapped;
    }
  }

  /**
   * The transaction's statements, BEGIN (`beginText`) first. BEGIN is sent with the first
   * statement, in the same write turn, and not awaited when that statement is a withBegin one
   * (as are the other callers' withBegin statements of a group, each conditioned on BEGIN the
   * same way); no other statement is sent, and no answer trusted, before BEGIN has answered.
   * `opened()` sends BEGIN if nothing has yet, and resolves once it answered.
   */
  function txSql(
    client: pg.PoolClient,
    settings: TransactionSettings,
    beginText: string,
  ): {
    tx: TxSql;
    opened: () => Promise<void>;
    committedAhead: () => Answer<unknown> | undefined;
    lateness: () => Answer<unknown> | undefined;
  } {
    let savepoints = 0;
    let begun: Promise<unknown> | undefined;
    let open = false;
    // Statements sent and not yet answered, and (`together`) those held until none is.
    let unanswered = 0;
    let held: { go: () => void; last: boolean; beside: boolean; withBegin: boolean }[] = [];
    let flushing = false;
    // The COMMIT, once it went out behind the works' last statements (see flushSoon), and the
    // check before it that the database reached it in time (finality_before).
    let committing: Answer<unknown> | undefined;
    let inTime: Answer<unknown> | undefined;
    const commitsAhead = settings.together === true && settings.worksLeft !== undefined;
    const begin = () => {
      if (begun === undefined) {
        unanswered++;
        begun = query(client, beginText, undefined, false, settings);
        const answered = () => {
          unanswered--;
          flushSoon();
        };
        begun.then(answered, answered); // awaited by opened(), its failure thrown there
      }
      return begun;
    };
    const opened = async () => {
      if (open) return;
      await begin();
      open = true;
    };
    const sent = <T>(
      text: string,
      values: readonly unknown[] | undefined,
      opts: QueryOptions | undefined,
    ) => {
      unanswered++;
      const answer = query<T>(client, text, values, opts?.prepare ?? false, settings);
      const answered = () => {
        unanswered--;
        flushSoon();
      };
      answer.then(answered, answered);
      return answer;
    };
    const direct = <T>(text: string, values?: readonly unknown[], opts?: QueryOptions): Answer<T> => {
      if (open) return sent<T>(text, values, opts);
      if (opts?.withBegin !== true) return opened().then(() => sent<T>(text, values, opts));
      begin();
      const answer = sent<T>(text, values, opts);
      answer.catch(() => {}); // BEGIN's failure, if any, is the one to throw (it comes first)
      return opened().then(() => answer);
    };
    /**
     * The latest database time at which a COMMIT sent now may still run: the client's deadline
     * for it less what the COMMIT and its answer need (Infinity when the client waits for ever);
     * null while the database's clock is unknown, and then no COMMIT goes ahead.
     */
    function latestCommitAt(): number | null {
      const deadline = settings.queryTimeoutMs ?? queryTimeoutMs;
      if (!Number.isFinite(deadline)) return Number.POSITIVE_INFINITY;
      const now = options.databaseNow?.() ?? null;
      return now === null ? null : now + deadline - Math.min(MAX_COMMIT_MARGIN_MS, deadline / 4);
    }
    // Once every answer is in and the works that were waiting for them have sent what they send
    // next (a turn of the event loop later), the held statements go out in one write.
    function flushSoon(): void {
      if (flushing || unanswered > 0 || held.length === 0) return;
      flushing = true;
      setImmediate(() => {
        flushing = false;
        if (unanswered > 0) return;
        const batch = held;
        held = [];
        // Every work still running waits on a last statement here (and those sent beside it):
        // nothing will follow them, so the COMMIT goes with them. BEGIN has answered, or goes first
        // in this same write, ahead of statements that each write only inside it (withBegin): then
        // the whole transaction is one round trip.
        const latest = commitsAhead ? latestCommitAt() : null;
        const ahead =
          latest !== null &&
          (open || batch.every((statement) => statement.withBegin)) &&
          batch.every((statement) => statement.last || statement.beside) &&
          batch.reduce((lasts, statement) => lasts + (statement.last ? 1 : 0), 0) === settings.worksLeft?.();
        const stream = (client as unknown as { connection?: { stream?: Corkable } }).connection?.stream;
        stream?.cork?.();
        try {
          for (const statement of batch) statement.go();
          if (ahead) {
            // The database commits only if it gets here in time for its answer to reach this
            // client before the client gives up: after a silence (a frozen server, a network
            // holding the bytes) it would otherwise commit what its caller was told had failed.
            if (Number.isFinite(latest)) {
              inTime = query(client, "SELECT finality_before($1)", [latest], true, settings);
              inTime.catch(() => {}); // awaited by begin, which throws its failure
            }
            committing = query(client, "COMMIT", undefined, false, settings);
            committing.catch(() => {}); // awaited by begin, which deals with its failure
          }
        } finally {
          stream?.uncork?.();
        }
      });
    }
    const send = <T>(text: string, values?: readonly unknown[], opts?: QueryOptions): Answer<T> => {
      if (committing !== undefined) {
        // A work broke the promise of its last statement: refused, and begin says it loudly.
        return Promise.reject(
          new FinalityError(
            "internal",
            "transaction: a statement after its work's last one (the COMMIT went ahead)",
          ),
        );
      }
      if (settings.together !== true) return direct<T>(text, values, opts);
      return new Promise((resolve, reject) => {
        held.push({
          go: () => direct<T>(text, values, opts).then(resolve, reject),
          last: opts?.last === true,
          beside: opts?.beside === true,
          withBegin: opts?.withBegin === true,
        });
        flushSoon();
      });
    };
    const inSavepoint = async <R>(handle: TxSql, work: (sp: TxSql) => Promise<R>): Promise<R> => {
      const name = `finality_sp_${++savepoints}`;
      await handle.unsafe(`SAVEPOINT ${name}`);
      try {
        const result = await work(handle);
        await handle.unsafe(`RELEASE SAVEPOINT ${name}`);
        return result;
      } catch (error) {
        await handle.unsafe(`ROLLBACK TO SAVEPOINT ${name}`);
        throw error;
      }
    };
    // Several works may share the transaction at once (the group commit runs its callers
    // together). A savepoint is theirs alone while it is open: another work's statement sent in
    // between would be rolled back with it, and a RELEASE releases every savepoint set after its own.
    let exclusive: Promise<void> | undefined;
    const inside: TxSql = { unsafe: send, savepoint: (work) => inSavepoint(inside, work), commitsAhead };
    const tx: TxSql = {
      commitsAhead,
      async unsafe<T>(text: string, values?: readonly unknown[], opts?: QueryOptions) {
        while (exclusive !== undefined) await exclusive;
        return send<T>(text, values, opts);
      },
      async savepoint(work) {
        while (exclusive !== undefined) await exclusive;
        let done = () => {};
        exclusive = new Promise((resolve) => {
          done = resolve;
        });
        try {
          return await inSavepoint(inside, work);
        } finally {
          exclusive = undefined;
          done();
        }
      },
    };
    return { tx, opened, committedAhead: () => committing, lateness: () => inTime };
  }

  // When each checkout still unanswered began: how long the oldest has waited says the pool is
  // starved. (pg-pool hands idle connections out on the next tick, so every checkout is tracked.)
  const waitingSince = new Set<{ at: number }>();
  async function checkout(): Promise<pg.PoolClient> {
    const waiter = { at: performance.now() };
    waitingSince.add(waiter);
    try {
      const connecting = pool.connect();
      // More callers queued than idle connections to hand them: this one waits for a release.
      if (pool.waitingCount > pool.idleCount) counts.waits++;
      return await connecting;
    } catch (error) {
      return failed(error);
    } finally {
      waitingSince.delete(waiter);
    }
  }

  function failed(error: unknown): never {
    const mapped = driverError(error);
    count(mapped);
    throw mapped;
  }

  async function begin<T>(
    modeOrWork: string | ((tx: TxSql) => Promise<T>),
    maybeWork?: (tx: TxSql) => Promise<T>,
    settings: TransactionSettings = {},
  ) {
    const mode = typeof modeOrWork === "string" ? modeOrWork.replace(/[^a-z ]/gi, "") : "";
    const work = typeof modeOrWork === "string" ? maybeWork : modeOrWork;
    if (!work) throw new TypeError("begin needs a function");
    const client = await checkout();
    // Between statements a checked-out client's socket error is emitted on the client.
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on("error", onError);
    const local =
      settings.lockTimeoutMs === undefined
        ? ""
        : `; SET LOCAL lock_timeout = ${Math.max(1, Math.round(settings.lockTimeoutMs))}`;
    // The short lock_timeout is for the work's row locks, and a COMMIT takes no lock: settlements
    // are numbered when read (migration 0016), not under a lock at COMMIT as 0007 did.
    // Sent with the work's first statement (txSql): a withBegin one goes in the same round trip.
    const { tx, opened, committedAhead, lateness } = txSql(
      client,
      settings,
      `BEGIN${mode ? ` ${mode}` : ""}${local}; SET LOCAL finality.in_transaction = 'on'`,
    );
    try {
      const result = await work(tx);
      await opened();
      const committed = await (committedAhead() ?? query(client, "COMMIT", undefined, false, settings));
      // The database reached the COMMIT too late (finality_before): it rolled back, as it would
      // at a statement_timeout, and that is the error to give.
      await lateness();
      // A transaction in which a statement failed answers COMMIT with ROLLBACK, and no error:
      // work that caught that statement's error must not be told its writes are stored.
      if (committed.command === "ROLLBACK") {
        throw new FinalityError(
          "internal",
          "transaction: rolled back at COMMIT: a statement in it failed and its error was caught",
        );
      }
      return result;
    } catch (error) {
      // A COMMIT that went ahead of the last statements' answers (TxSql.commitsAhead) answers
      // ROLLBACK when one of them failed. Had it committed, a work failed after its last
      // statement, which that promise rules out: nobody may be told the writes were undone.
      // A COMMIT sent behind a BEGIN the server refused ran outside any transaction: it answers
      // COMMIT (with a warning), yet nothing of the work's was written (withBegin statements write
      // only inside the transaction), and BEGIN's error is the one to throw. (A BEGIN that failed
      // in the client, a timeout, leaves the outcome unknown, as any lost answer does: the caller
      // is told the store failed, and the sender's retry is deduplicated if it did commit.)
      const ahead = await committedAhead()?.then(
        async (answer) =>
          (await opened().then(
            () => true,
            () => false,
          ))
            ? answer.command
            : undefined,
        () => undefined,
      );
      const failure =
        ahead === "COMMIT"
          ? new FinalityError(
              "internal",
              "transaction: committed, yet its work failed after its last statement",
              {
                cause: error,
              },
            )
          : error;
      // A connection gone silent or dead cannot roll back (a ROLLBACK would only queue behind the
      // unanswered statement for another deadline): destroying it ends the transaction.
      if (isLostConnection(error)) broken ??= toError(error);
      else if (ahead !== "COMMIT" && ahead !== "ROLLBACK")
        await query(client, "ROLLBACK", undefined, false, settings).catch((rollbackError: unknown) => {
          broken ??= toError(rollbackError);
        });
      throw failure;
    } finally {
      client.off("error", onError);
      // A connection that failed is destroyed, not pooled again: the pool opens a fresh one.
      client.release(broken);
    }
  }

  return {
    async unsafe(text, values, opts) {
      const client = await checkout();
      let broken: Error | undefined;
      try {
        return await query(client, text, values, opts?.prepare ?? false);
      } catch (error) {
        if (isConnectionError(error)) broken = toError(error);
        throw error;
      } finally {
        client.release(broken);
      }
    },
    starvedMs() {
      let oldest = Number.POSITIVE_INFINITY;
      for (const waiter of waitingSince) oldest = Math.min(oldest, waiter.at);
      return oldest === Number.POSITIVE_INFINITY ? 0 : performance.now() - oldest;
    },
    begin: begin as Sql["begin"],
    stats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, ...counts }),
    async end(opts) {
      // Lets queries already sent finish (bounded), then closes every pooled connection.
      const ending = pool.end();
      const bound = (opts?.timeout ?? 5) * 1000;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([ending, new Promise<void>((resolve) => (timer = setTimeout(resolve, bound)))]);
      clearTimeout(timer);
    },
  };
}

// Driver and socket codes that mean "the database cannot be reached right now".
const CONNECTION_CODES = new Set([
  "CONNECTION_CLOSED",
  "POOL_TIMEOUT",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
  "CONNECT_TIMEOUT",
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EPIPE",
]);

/** The driver's or the socket's own failure (no SQLSTATE): the connection is not usable any more. */
export function isLostConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return !(error instanceof pg.DatabaseError) && typeof code === "string" && CONNECTION_CODES.has(code);
}

/** SQLSTATE of a server error, or undefined for anything else. */
export function sqlState(error: unknown): string | undefined {
  return error instanceof pg.DatabaseError ? error.code : undefined;
}

/** Serialization failure or deadlock: the whole transaction may simply be run again. */
export function isTransient(error: unknown): boolean {
  const state = sqlState(error);
  return state === "40001" || state === "40P01" || isFinalityError(error, "version-conflict");
}

/** Lock not available (55P03: lock_timeout or NOWAIT), on the error or on what it wraps. */
export function isLockNotAvailable(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return sqlState(error) === "55P03" || sqlState(cause) === "55P03";
}

function isConnectionError(error: unknown): boolean {
  const state = sqlState(error);
  if (state !== undefined) {
    // 08: connection exception; 53: out of resources (too many connections); 57P: shutting
    // down or starting up; 28: authentication; 3D000: no such database; 57014: cancelled by
    // statement_timeout; 55P03: lock_timeout; 25P03: idle_in_transaction_session_timeout. The
    // last three are a stalled peer or an overloaded server: a retry later may well succeed.
    return /^(08|53|57P|28)/.test(state) || ["3D000", "57014", "55P03", "25P03"].includes(state);
  }
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && CONNECTION_CODES.has(code);
}

/**
 * Maps driver errors to FinalityError so that callers never see node-postgres types; anything
 * else (the caller's own errors thrown from inside a transaction) passes through unchanged.
 */
export function toStoreError(error: unknown, what: string): unknown {
  if (isFinalityError(error)) return error;
  if (isConnectionError(error)) {
    return new FinalityError(
      "store-unavailable",
      `${what}: database unavailable: ${toError(error).message}`,
      {
        cause: error,
        retryAfterMs: 1000,
      },
    );
  }
  const state = sqlState(error);
  if (state === undefined) return error;
  if (state === "40001" || state === "40P01") {
    return new FinalityError("version-conflict", `${what}: ${toError(error).message}`, {
      cause: error,
      details: { sqlState: state },
    });
  }
  // 23: integrity constraint violation (e.g. from a transactional effect's own SQL).
  const code = state.startsWith("23") ? "conflict" : "internal";
  return new FinalityError(code, `${what}: ${toError(error).message}`, {
    cause: error,
    details: { sqlState: state },
  });
}
