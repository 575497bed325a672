// (b) The design teams write today: verify with the official standardwebhooks package, then one
// SQLite transaction per event that reads the row and writes it with a version compare-and-set.
// No delivery dedupe, no audit trail, no outbox.
import { createServer } from "node:http";
import Database from "better-sqlite3";
import { Webhook } from "standardwebhooks";

const [path, synchronous = "NORMAL", secret] = process.argv.slice(2);
const db = new Database(path);
db.pragma("journal_mode = WAL");
db.pragma(`synchronous = ${synchronous}`);
db.exec(`CREATE TABLE IF NOT EXISTS jobs (
  id TEXT PRIMARY KEY, state TEXT NOT NULL, seq INTEGER, version INTEGER NOT NULL,
  result TEXT, updated_at INTEGER NOT NULL)`);
const select = db.prepare("SELECT state, seq, version FROM jobs WHERE id = ?");
const insert = db.prepare(
  "INSERT INTO jobs (id, state, seq, version, result, updated_at) VALUES (?, ?, ?, 1, ?, ?)",
);
const update = db.prepare(
  "UPDATE jobs SET state = ?, seq = ?, version = version + 1, result = ?, updated_at = ? WHERE id = ? AND version = ?",
);
const RANK = { pending: 0, running: 1, succeeded: 2, failed: 2, cancelled: 2, expired: 2 };
const apply = db.transaction((event) => {
  const row = select.get(event.jobId);
  const result = event.result === undefined ? null : JSON.stringify(event.result);
  if (!row) return insert.run(event.jobId, event.state, event.seq ?? null, result, Date.now()).changes;
  const newer =
    RANK[event.state] > RANK[row.state] ||
    (RANK[event.state] === RANK[row.state] && RANK[row.state] < 2 && (event.seq ?? 0) > (row.seq ?? 0));
  if (!newer) return 0;
  return update.run(event.state, event.seq ?? null, result, Date.now(), event.jobId, row.version).changes;
});
const webhook = new Webhook(secret);

const server = createServer((request, response) => {
  const chunks = [];
  request.on("data", (chunk) => chunks.push(chunk));
  request.on("end", () => {
    const body = Buffer.concat(chunks).toString("utf8");
    let event;
    try {
      event = webhook.verify(body, request.headers);
    } catch {
      response.writeHead(401).end();
      return;
    }
    apply.immediate(event);
    response.writeHead(200, { "content-type": "application/json" });
    response.end('{"ok":true}');
  });
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`hand-rolled listening on http://127.0.0.1:${server.address().port}\n`);
});
process.on("SIGTERM", () =>
  server.close(() => {
    db.close();
    process.exit(0);
  }),
);
