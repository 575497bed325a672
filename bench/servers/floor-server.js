// (f) The floor for a durable, deduplicated, audited intake on SQLite, built from issue 29's
// description: what the least code that keeps Finality's guarantees for a webhook would cost.
// node:crypto HMAC verify (Standard Webhooks), the body parsed once, one transaction per
// event-loop turn (group commit), and three prepared statements per webhook: the delivery id
// (INSERT OR IGNORE), the job upsert with the monotonic rule in its WHERE … RETURNING, and the
// audit event. Positional parameters, one short answer. No log line, no metrics.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import Database from "better-sqlite3";

const [path, synchronous = "NORMAL", secret] = process.argv.slice(2);
const key = Buffer.from(secret.replace(/^whsec_/, ""), "base64");
const db = new Database(path);
db.pragma("journal_mode = WAL");
db.pragma(`synchronous = ${synchronous}`);
db.exec(`
CREATE TABLE IF NOT EXISTS deliveries (provider TEXT NOT NULL, delivery_id TEXT NOT NULL,
  received_at INTEGER NOT NULL, PRIMARY KEY (provider, delivery_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS jobs (provider TEXT NOT NULL, id TEXT NOT NULL, state TEXT NOT NULL,
  rank INTEGER NOT NULL, seq INTEGER, version INTEGER NOT NULL, result TEXT,
  updated_at INTEGER NOT NULL, PRIMARY KEY (provider, id));
CREATE TABLE IF NOT EXISTS events (seq_no INTEGER PRIMARY KEY, provider TEXT NOT NULL,
  job_id TEXT NOT NULL, delivery_id TEXT, state TEXT NOT NULL, applied INTEGER NOT NULL, at INTEGER NOT NULL);`);
const recordDelivery = db.prepare(
  "INSERT OR IGNORE INTO deliveries (provider, delivery_id, received_at) VALUES (?, ?, ?)",
);
// Monotonic: a terminal state (rank 2) is final; otherwise a higher rank, or the same rank with a
// higher seq, wins. The WHERE decides, RETURNING says whether it did (no row: not applied).
const upsertJob = db.prepare(`
INSERT INTO jobs (provider, id, state, rank, seq, version, result, updated_at) VALUES (?, ?, ?, ?, ?, 1, ?, ?)
ON CONFLICT (provider, id) DO UPDATE SET state = excluded.state, rank = excluded.rank, seq = excluded.seq,
  version = jobs.version + 1, result = excluded.result, updated_at = excluded.updated_at
WHERE jobs.rank < 2 AND (excluded.rank > jobs.rank OR (excluded.rank = jobs.rank AND excluded.seq > jobs.seq))
RETURNING version`);
const appendEvent = db.prepare(
  "INSERT INTO events (provider, job_id, delivery_id, state, applied, at) VALUES (?, ?, ?, ?, ?, ?)",
);
const begin = db.prepare("BEGIN IMMEDIATE");
const commit = db.prepare("COMMIT");
const RANK = { pending: 0, running: 1, succeeded: 2, failed: 2, cancelled: 2, expired: 2 };

/** One webhook's writes; returns the answer's JSON text. */
function apply(provider, deliveryId, event, now) {
  if (recordDelivery.run(provider, deliveryId, now).changes === 0) {
    appendEvent.run(provider, event.jobId, deliveryId, event.state, 0, now);
    return `{"outcome":"duplicate-delivery","applied":false,"jobId":${JSON.stringify(event.jobId)}}`;
  }
  const result = event.result === undefined ? null : JSON.stringify(event.result);
  const row = upsertJob.get(
    provider,
    event.jobId,
    event.state,
    RANK[event.state],
    event.seq ?? null,
    result,
    now,
  );
  appendEvent.run(provider, event.jobId, deliveryId, event.state, row === undefined ? 0 : 1, now);
  return row === undefined
    ? `{"outcome":"stale","applied":false,"jobId":${JSON.stringify(event.jobId)}}`
    : `{"outcome":"applied","applied":true,"jobId":${JSON.stringify(event.jobId)},"version":${row.version}}`;
}

let group = [];
function flush() {
  const batch = group;
  group = [];
  const now = Date.now();
  begin.run();
  const answers = batch.map((item) => apply("acme", item.id, item.event, now));
  commit.run();
  for (let i = 0; i < batch.length; i++) answer(batch[i].response, 200, answers[i]);
}

function answer(response, status, body) {
  response.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(body),
  });
  response.end(body);
}

function verified(headers, body) {
  const id = headers["webhook-id"];
  const timestamp = headers["webhook-timestamp"];
  const signature = headers["webhook-signature"];
  if (!id || !timestamp || !signature) return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  const expected = createHmac("sha256", key).update(`${id}.${timestamp}.`).update(body).digest();
  for (const part of signature.split(" ")) {
    const given = Buffer.from(part.slice(part.indexOf(",") + 1), "base64");
    if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
  }
  return false;
}

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    if (!verified(request.headers, body)) return answer(response, 401, '{"error":"signature"}');
    let event;
    try {
      event = JSON.parse(body.toString("utf8"));
    } catch {
      return answer(response, 400, '{"error":"json"}');
    }
    if (typeof event?.jobId !== "string" || !(event.state in RANK))
      return answer(response, 400, '{"error":"shape"}');
    if (group.length === 0) setImmediate(flush);
    group.push({ id: request.headers["webhook-id"], event, response });
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`floor listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on("SIGTERM", () =>
  server.close(() => {
    db.close();
    process.exit(0);
  }),
);
