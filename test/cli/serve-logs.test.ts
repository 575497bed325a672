import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { CLI, startService, tempDir } from "../http/helpers/service.js";
import { SECRET, sendWebhook } from "../http/helpers/webhooks.js";

// `finality serve` logs readable lines to a person at a terminal and JSON lines to a pipe.

const dir = tempDir();
/** Process groups still running, stopped after the tests even when one of them failed. */
const started = new Set<number>();
afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  dir.cleanup();
});

function envFor(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env))
    if (!key.startsWith("FINALITY_") && key !== "DATABASE_URL" && key !== "NO_COLOR") env[key] = value;
  return { ...env, FINALITY_LOG_LEVEL: "info", TERM: "xterm" };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are what a terminal gets.
const withoutColours = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, "");

/**
 * Runs serve inside `script`, which gives it a pseudo-terminal as stdout, until its "listening"
 * log line has been printed; then stops it with SIGTERM and returns everything it printed.
 */
function serveOnTerminal(db: string): Promise<string> {
  const command = `exec ${process.execPath} ${CLI} serve --port 0 --db ${db}`;
  const child = spawn("script", ["-qefc", command, "/dev/null"], {
    env: envFor(),
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  started.add(child.pid as number);
  let output = "";
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.stdout.on("data", (data: Buffer) => {
      output += data.toString();
      // The log line comes after the service listens; `script` ends when serve does.
      if (/INFO\s+listening/.test(withoutColours(output)) && child.exitCode === null)
        process.kill(-(child.pid as number), "SIGTERM");
    });
    child.on("close", () => {
      started.delete(child.pid as number);
      resolve(output);
    });
  });
}

describe("serve's logs", () => {
  it("are readable lines on a terminal", async () => {
    const output = await serveOnTerminal(dir.file("tty.db"));
    const plain = withoutColours(output);
    expect(plain).toMatch(
      /\d\d:\d\d:\d\d\.\d{3} INFO +listening url=http:\/\/127\.0\.0\.1:\d+ providers=\["generic"\]/,
    );
    expect(plain).not.toContain('"level":');
    expect(output).toContain("\u001b[");
  });

  it("are JSON lines when stdout is not a terminal", async () => {
    const service = await startService({ db: dir.file("pipe.db"), env: { FINALITY_LOG_LEVEL: "info" } });
    await service.stop();
    const lines = service
      .stdout()
      .split("\n")
      .filter((line) => line.startsWith("{"));
    const records = lines.map((line) => JSON.parse(line) as { level: number; msg: string });
    expect(records.some((record) => record.msg === "listening" && record.level === 30)).toBe(true);
    expect(service.stdout()).not.toMatch(/INFO +listening/);
  });

  it("log each webhook as one request line, its fields in the app's order (method, path, route, status, ms, then the intake's)", async () => {
    const config = dir.file("logs.config.json");
    writeFileSync(
      config,
      JSON.stringify({ providers: { acme: { type: "generic", webhook: { secrets: [SECRET] } } } }),
    );
    const service = await startService({
      db: dir.file("lines.db"),
      args: ["--config", config],
      env: { FINALITY_LOG_LEVEL: "info" },
    });
    const sent = await sendWebhook(
      service.url,
      "acme?via=retry",
      { jobId: "job-1", state: "running" },
      { id: "msg-1" },
    );
    expect(sent.status).toBe(200);
    await service.stop();
    const [line] = service
      .stdout()
      .split("\n")
      .filter((text) => text.startsWith("{") && text.includes('"msg":"request"'))
      .map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(line).toMatchObject({
      method: "POST",
      path: "/webhooks/acme",
      route: "/webhooks/:provider",
      status: 200,
    });
    expect(typeof line?.ms).toBe("number");
    expect(Object.keys(line ?? {}).slice(4)).toEqual([
      "method",
      "path",
      "route",
      "status",
      "ms",
      "provider",
      "deliveryId",
      "jobId",
      "outcome",
      "msg",
    ]);
    expect(line).toMatchObject({ provider: "acme", deliveryId: "msg-1", jobId: "job-1", outcome: "applied" });
  });
});
