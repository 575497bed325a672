import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { tempDir } from "../helpers/temp-dir.js";
import type { Service } from "../http/helpers/service.js";
import { SECRET, serveWith } from "../service/service-helpers.js";
import { settleByWebhook } from "./stream-consumer.js";

// The README's exactly-once consumer, run as it is written: the block after the marker in
// EXAMPLE_SOURCE is extracted, saved as a module and run with Node against `finality serve`.
// Killed with SIGKILL half-way and started again, it must have recorded every settlement once
// (its results table's primary key refuses a second one, which would end it with an error).

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const EXAMPLE_SOURCE = join(ROOT, "README.md");
const MARKER = "<!-- exactly-once-consumer";

function exampleCode(): string {
  const text = readFileSync(EXAMPLE_SOURCE, "utf8");
  const after = text.slice(text.indexOf(MARKER));
  const block = /```js\n([\s\S]*?)```/.exec(after)?.[1];
  if (!block || !text.includes(MARKER)) throw new Error(`no example after ${MARKER} in ${EXAMPLE_SOURCE}`);
  return block;
}

/** The consumer as a child process; `handled` counts its "handled ..." lines as they come. */
function startConsumer(file: string, env: Record<string, string>) {
  const child: ChildProcess = spawn(process.execPath, [file], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  let partial = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    partial += chunk.toString();
    const parts = partial.split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts);
    for (const wake of waiters.splice(0)) wake();
  });
  void exited.then(() => {
    for (const wake of waiters.splice(0)) wake();
  });
  return {
    lines,
    stderr: () => stderr,
    async until(done: () => boolean): Promise<void> {
      while (!done()) {
        if (child.exitCode !== null) throw new Error(`the consumer exited (${child.exitCode}): ${stderr}`);
        await new Promise<void>((resolve) => waiters.push(resolve));
      }
    },
    kill: async () => {
      child.kill("SIGKILL");
      await exited;
    },
  };
}

describe("the README's exactly-once consumer", () => {
  const dir = tempDir("finality-consumer-");
  let service: Service | null = null;
  afterAll(async () => {
    await service?.stop("SIGKILL");
    dir.cleanup();
  });

  it("records every settlement exactly once across its own SIGKILL", async () => {
    // Beside a node_modules, so that its `import Database from "better-sqlite3"` resolves.
    symlinkSync(join(ROOT, "node_modules"), join(dir.path, "node_modules"));
    const file = join(dir.path, "consumer.mjs");
    writeFileSync(file, exampleCode());
    const live = await serveWith(dir, dir.file("ledger.db"), {
      providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } },
    });
    service = live;
    const consumerDb = dir.file("consumer.db");
    const env = { FINALITY_URL: live.url, CONSUMER_DB: consumerDb };
    // Opened read-write though it only reads: a SIGKILLed consumer can leave a hot rollback
    // journal, which only a connection that may write can roll back ("attempt to write a
    // readonly database", seen in CI).
    const rows = () => {
      const db = new Database(consumerDb, { fileMustExist: true });
      try {
        return db.prepare("SELECT count(*) FROM results").pluck().get() as number;
      } finally {
        db.close();
      }
    };
    const ids = Array.from({ length: 60 }, (_, i) => `job-${i}`);

    const first = startConsumer(file, env);
    const sending = settleByWebhook(() => live.url, ids.slice(0, 40), 4);
    await first.until(() => first.lines.length >= 15);
    await first.kill();
    expect(await sending).toEqual([]);

    const second = startConsumer(file, env);
    expect(await settleByWebhook(() => live.url, ids.slice(40), 4)).toEqual([]);
    await second.until(() => rows() >= ids.length);
    await second.kill();
    expect(rows()).toBe(ids.length);
    const db = new Database(consumerDb, { fileMustExist: true });
    const recorded = db.prepare("SELECT id FROM results ORDER BY id").pluck().all() as string[];
    db.close();
    expect(recorded).toEqual([...ids].sort());
    expect(second.stderr()).toBe("");
  }, 180_000);
});
