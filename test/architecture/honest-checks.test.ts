import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { freePort, startRedisServer } from "../helpers/broker-servers.js";
import { requirePostgres } from "../helpers/postgres.js";
import { requireBinary, requireServer, START_COMMANDS } from "../helpers/services.js";

// Issue 33: a missing service fails the test that needs it, naming the service and the command
// that starts it, at once; and no test turns into a skip or an early return instead.

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

describe("a missing service fails the test that needs it", () => {
  it("PostgreSQL: names the service and the exact command, without waiting for a timeout", async () => {
    const port = await freePort();
    const started = Date.now();
    const failure = requirePostgres("a test", `postgres://postgres@127.0.0.1:${port}/test`);
    await expect(failure).rejects.toThrow(
      `a test: PostgreSQL is not available (nothing answers at 127.0.0.1:${port})`,
    );
    await expect(failure).rejects.toThrow(
      "`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start`",
    );
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("RabbitMQ: a refused port fails with `rabbitmq-server -detached`", async () => {
    const port = await freePort();
    await expect(requireServer("RabbitMQ", `amqp://guest:guest@127.0.0.1:${port}`, 5672)).rejects.toThrow(
      "RabbitMQ is not available (nothing answers at 127.0.0.1:" +
        port +
        "): start it with `rabbitmq-server -detached`",
    );
  });

  it("a server that answers passes the check", async () => {
    await expect(requirePostgres("the check itself")).resolves.toBeUndefined();
  });

  it("Redis and NATS (private servers): a missing binary fails with the service's command, not ENOENT", async () => {
    const path = process.env.PATH;
    process.env.PATH = "/nonexistent";
    try {
      await expect(startRedisServer()).rejects.toThrow(
        `Redis is not available (redis-server is missing): start it with \`${START_COMMANDS.Redis}\``,
      );
    } finally {
      process.env.PATH = path;
    }
  });

  it("Chromium: a missing binary fails with `apt-get install chromium`", () => {
    expect(() => requireBinary("Chromium", "/nonexistent/chromium")).toThrow(
      "Chromium is not available (/nonexistent/chromium is missing): start it with `apt-get install chromium`",
    );
  });
});

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : testFiles(path);
    return /\.(ts|mts|mjs)$/.test(entry.name) ? [relative(ROOT, path)] : [];
  });
}

/** Skips that stay, each for a reason that is not a missing service. */
const ALLOWED_SKIPS: Record<string, string> = {
  // Writes docs/images/ only when asked to (FINALITY_DOCS_SCREENSHOTS=1): not a check.
  "test/browser/docs-screenshots.test.ts": "describe.skipIf(!enabled)",
  // A store without a second connection or a reopen has nothing to test there (the memory store).
  "test/store/contract/transactions.ts": "context.skip()",
  // npm's registry is not a local service; outside CI an unreachable registry is a skip that says so.
  "test/package/install.test.ts": "context.skip(note)",
};

describe("no test passes on a path that asserts nothing", () => {
  it("no test file skips on a condition, except the few listed here with their reason", () => {
    const skipping = testFiles(join(ROOT, "test"))
      .filter((file) => file !== "test/architecture/honest-checks.test.ts")
      .flatMap((file) => {
        const text = readFileSync(join(ROOT, file), "utf8");
        const found = text.match(/\b(?:it|describe|test)\.(?:skipIf|runIf|skip)\b|context\.skip\(/g) ?? [];
        return found.length > 0 ? [file] : [];
      });
    expect(skipping.sort()).toEqual(Object.keys(ALLOWED_SKIPS).sort());
    for (const [file, use] of Object.entries(ALLOWED_SKIPS)) {
      expect(readFileSync(join(ROOT, file), "utf8")).toContain(use);
    }
  });
});
