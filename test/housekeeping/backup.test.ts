import { readFileSync, writeFileSync } from "node:fs";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createSqliteStore } from "../../src/store/sqlite/sqlite-store.js";
import { tempDir } from "../helpers/temp-dir.js";
import { runCli } from "../http/helpers/service.js";
import { sendWebhook } from "../http/helpers/webhooks.js";
import { SECRET, serveWith } from "../service/service-helpers.js";

describe("backup during a steady webhook load", () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  it("restores to a database that passes integrity_check and holds every event acknowledged before the backup began", async () => {
    const db = dir.file("live.db");
    const service = await serveWith(dir, db, {
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
    });
    const acked: { id: string; at: number }[] = [];
    let stop = false;
    let sent = 0;
    const load = Promise.all(
      Array.from({ length: 8 }, async (_, lane) => {
        while (!stop) {
          const n = sent++;
          const id = `msg_${lane}_${n}`;
          const answer = await sendWebhook(
            service.url,
            "acme",
            { jobId: `job-${n % 500}`, state: "running", seq: n },
            { id },
          );
          if (answer.status === 200) acked.push({ id, at: Date.now() });
        }
      }),
    );
    // Let the load build up, measured in acknowledged webhooks rather than time.
    while (acked.length < 2000) await new Promise((resolve) => setImmediate(resolve));
    const backupStartedAt = Date.now();
    const ackedBefore = acked.filter((a) => a.at < backupStartedAt).map((a) => a.id);
    const backup = dir.file("backup.db");
    const result = await runCli(["backup", backup, "--db", db, "--json"]);
    expect(result.code, result.stderr).toBe(0);
    const afterBackup = acked.length;
    stop = true;
    await load;
    await service.stop("SIGTERM");
    expect(acked.length).toBeGreaterThan(afterBackup - 1);

    const restored = dir.file("restored.db");
    const restore = await runCli(["restore", backup, "--db", restored, "--json"]);
    expect(restore.code, restore.stderr).toBe(0);
    expect(JSON.parse(restore.stdout)).toMatchObject({ integrity: "ok", pendingMigrations: 0 });
    const check = new Database(restored, { readonly: true });
    expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
    const ids = new Set(
      check.prepare("SELECT delivery_id FROM events WHERE delivery_id IS NOT NULL").pluck().all(),
    );
    check.close();
    const missing = ackedBefore.filter((id) => !ids.has(id));
    expect(missing).toEqual([]);
    console.log(
      `backup: ${ackedBefore.length} acknowledged before it began, all present; ${ids.size} in the copy`,
    );

    const refused = await runCli(["restore", backup, "--db", restored]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("--force");

    // Restoring a database onto itself is refused and leaves it whole.
    const ontoItself = await runCli(["restore", restored, "--db", restored, "--force"]);
    expect(ontoItself.code).toBe(1);
    expect(ontoItself.stderr).toContain("is the database itself");
    const still = new Database(restored, { readonly: true });
    expect(still.pragma("integrity_check", { simple: true })).toBe("ok");
    still.close();
  });

  it("a backup of a damaged database exits 1, after saying what is wrong", async () => {
    const damaged = dir.file("damaged.db");
    await createSqliteStore({ path: damaged }).close();
    // Damage that leaves the file readable: an index whose key no longer matches its table row.
    const db = new Database(damaged);
    const record = db.prepare(
      "INSERT INTO deliveries (provider, delivery_id, received_at) VALUES ('acme', ?, 0)",
    );
    for (let i = 0; i < 20; i++) record.run(`marker-${String(i).padStart(4, "0")}`);
    db.exec("CREATE INDEX damaged_index ON deliveries (delivery_id)");
    const pageSize = db.pragma("page_size", { simple: true }) as number;
    const { rootpage } = db
      .prepare("SELECT rootpage FROM sqlite_master WHERE name = 'damaged_index'")
      .get() as {
      rootpage: number;
    };
    db.close();
    const bytes = readFileSync(damaged);
    const page = (rootpage - 1) * pageSize;
    const at = bytes.indexOf("marker-0007", page);
    expect(at).toBeGreaterThan(page);
    expect(at).toBeLessThan(page + pageSize);
    bytes.write("X", at);
    writeFileSync(damaged, bytes);
    const result = await runCli(["backup", dir.file("damaged-copy.db"), "--db", damaged, "--json"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("fails its integrity check");
    expect(JSON.parse(result.stdout).integrity).not.toBe("ok");
  });
});
