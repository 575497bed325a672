import { readdirSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, type Service, startService, tempDir } from "../http/helpers/service.js";

// `finality restore --force` onto the file of a running `serve` used to succeed: the service
// kept writing into the replaced file, answered `200 applied`, and lost it all on its restart.
// Restore now refuses while a process has the ledger open, naming it, and only then.

const dir = tempDir();
const services: Service[] = [];
afterAll(async () => {
  for (const service of services) await service.stop("SIGKILL");
  dir.cleanup();
});

async function serving(name: string): Promise<{ db: string; backup: string; service: Service }> {
  const db = dir.file(`${name}.db`);
  const service = await startService({ db });
  services.push(service);
  const backup = dir.file(`${name}-backup.db`);
  const copied = await runCli(["backup", backup, "--db", db]);
  expect(copied.code, copied.stderr).toBe(0);
  return { db, backup, service };
}

const holderFiles = (name: string) =>
  readdirSync(dir.path).filter((file) => file.startsWith(`${name}.db.pid-`));

describe("restore onto a ledger in use", () => {
  it("refuses while serve has the file open, naming its pid and how to stop it; restores once it stopped", async () => {
    const { db, backup, service } = await serving("running");
    const pid = service.child.pid as number;
    expect(holderFiles("running")).toEqual([`running.db.pid-${pid}`]);
    const refused = await runCli(["restore", backup, "--db", db, "--force"]);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`is open in pid ${pid} (finality serve --port 0 --db ${db}`);
    expect(refused.stderr).toContain(`kill -TERM ${pid}`);
    // Nothing was replaced: the service still answers from its file.
    expect((await fetch(`${service.url}/readyz`)).status).toBe(200);
    expect(service.child.exitCode).toBeNull();

    expect(await service.stop("SIGTERM")).toMatchObject({ code: 0 });
    expect(holderFiles("running")).toEqual([]);
    const restored = await runCli(["restore", backup, "--db", db, "--force"]);
    expect(restored.code, restored.stderr).toBe(0);
  }, 60_000);

  it("is not blocked by the record of a serve that crashed (SIGKILL): the process is gone", async () => {
    const { db, backup, service } = await serving("crashed");
    await service.stop("SIGKILL");
    // The crash left its record behind; the liveness check sees through it and removes it.
    expect(holderFiles("crashed")).toHaveLength(1);
    const restored = await runCli(["restore", backup, "--db", db, "--force"]);
    expect(restored.code, restored.stderr).toBe(0);
    expect(holderFiles("crashed")).toEqual([]);
  }, 60_000);
});
