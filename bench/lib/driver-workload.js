// One process running a representative write workload (the shape of one webhook's ingest: record
// the delivery, lock the job row, upsert it, append an event, commit) on one driver, so that the
// parent (bench/postgres-driver.bench.js) can cut its connections and see whether it survives.
// Commands on stdin, one JSON answer per line on stdout:
//   go N        run N concurrent loops until `halt`
//   halt        stop the loops; answers {committed, failed, errors}
//   health      every pooled connection must answer within 5 s: {ok, distinct, failed}
//   quit        close the pool and exit 0
// Env: DRIVER (postgres.js | pg), URL, SCHEMA, APP (application_name), MAX (pool size, 10).
import { createInterface } from "node:readline";

const { DRIVER, URL: url, SCHEMA: schema, APP: app } = process.env;
const MAX = Number(process.env.MAX ?? 10);

async function postgresJs() {
  const { default: postgres } = await import("postgres");
  const sql = postgres(url, {
    max: MAX,
    onnotice: () => {},
    connect_timeout: 5,
    connection: { application_name: app, search_path: schema },
  });
  return {
    query: (text, values = []) => sql.unsafe(text, values, { prepare: true }),
    tx: (work) => sql.begin((tx) => work((text, values = []) => tx.unsafe(text, values, { prepare: true }))),
    end: () => sql.end({ timeout: 2 }),
  };
}

async function nodePostgres() {
  const { default: pg } = await import("pg");
  const pool = new pg.Pool({
    connectionString: url,
    max: MAX,
    application_name: app,
    options: `-c search_path=${schema}`,
    connectionTimeoutMillis: 5000,
  });
  // An idle client's socket error is emitted on the pool, a checked-out one's (a FATAL between two
  // statements) on the client: without a listener either ends the process. As in the store.
  pool.on("error", () => {});
  pool.on("connect", (client) => client.on("error", () => {}));
  const names = new Map();
  const named = (text) => {
    let name = names.get(text);
    if (!name) {
      name = `q${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  return {
    query: async (text, values = []) => (await pool.query({ text, values, name: named(text) })).rows,
    async tx(work) {
      const client = await pool.connect();
      // A checked-out client's error between queries is emitted on the client.
      const onError = () => {};
      client.on("error", onError);
      let broken;
      try {
        await client.query("BEGIN");
        const result = await work(
          async (text, values = []) => (await client.query({ text, values, name: named(text) })).rows,
        );
        await client.query("COMMIT");
        return result;
      } catch (error) {
        broken = error;
        await client.query("ROLLBACK").catch(() => {});
        throw error;
      } finally {
        client.off("error", onError);
        // A failed transaction's client is destroyed rather than reused: its socket may be dead.
        client.release(broken);
      }
    },
    end: () => pool.end(),
  };
}

const db = DRIVER === "pg" ? await nodePostgres() : await postgresJs();
let running = false;
let loops = [];
let committed = 0;
let failed = 0;
const errors = new Map();
let serial = 0;

async function one() {
  const n = ++serial;
  const job = `job-${n % 500}`;
  await db.tx(async (q) => {
    await q("INSERT INTO deliveries (id) VALUES ($1) ON CONFLICT DO NOTHING", [`d-${process.pid}-${n}`]);
    const [row] = await q("SELECT version FROM jobs WHERE id = $1 FOR UPDATE", [job]);
    if (row) await q("UPDATE jobs SET version = version + 1, body = $2 WHERE id = $1", [job, `{"n":${n}}`]);
    else
      await q("INSERT INTO jobs (id, version, body) VALUES ($1, 1, $2) ON CONFLICT DO NOTHING", [job, "{}"]);
    await q("INSERT INTO events (job_id, at, body) VALUES ($1, $2, $3)", [job, new Date(), `{"n":${n}}`]);
  });
}

async function loop() {
  while (running) {
    try {
      await one();
      committed++;
    } catch (error) {
      failed++;
      const key = error?.code ?? error?.message ?? String(error);
      errors.set(key, (errors.get(key) ?? 0) + 1);
      // The database is being cut or restarted: do not spin.
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

async function health() {
  // MAX concurrent queries that each hold their connection a moment: all MAX connections must
  // be taken and must answer.
  const settled = await Promise.allSettled(
    Array.from({ length: MAX }, () =>
      Promise.race([
        db.query("SELECT pg_backend_pid() AS pid, pg_sleep(0.2)"),
        new Promise((_, reject) => setTimeout(() => reject(new Error("timeout")), 5000)),
      ]),
    ),
  );
  const pids = new Set(settled.filter((s) => s.status === "fulfilled").map((s) => s.value[0].pid));
  const bad = settled
    .filter((s) => s.status === "rejected")
    .map((s) => s.reason?.message ?? String(s.reason));
  return { ok: bad.length === 0, distinct: pids.size, failed: bad.slice(0, 3) };
}

const say = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);
for await (const line of createInterface({ input: process.stdin })) {
  const [command, arg] = line.split(" ");
  if (command === "go") {
    running = true;
    committed = failed = 0;
    errors.clear();
    loops = Array.from({ length: Number(arg) }, loop);
    say({ started: true });
  } else if (command === "halt") {
    running = false;
    await Promise.all(loops);
    say({ committed, failed, errors: Object.fromEntries(errors) });
  } else if (command === "health") {
    // Up to three tries a second apart: the first query after a restart may still find the server coming up.
    let result = await health();
    const first = result;
    let tries = 1;
    for (; tries < 3 && !result.ok; tries++) {
      await new Promise((r) => setTimeout(r, 1000));
      result = await health();
    }
    say({ ...result, tries, first });
  } else if (command === "quit") {
    await db.end();
    process.exit(0);
  }
}
