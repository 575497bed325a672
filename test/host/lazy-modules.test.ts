import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { POSTGRES_TEST_URL, requirePostgres } from "../helpers/postgres.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";

// `finality serve` loads a library only when its configuration uses it: PostgreSQL's driver, the
// broker clients and the OpenTelemetry SDK together hold about 50 MiB of a process that does not
// (issue 16, "Memory"). Which modules a real `serve` resolves is recorded by a module hook.

const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const RECORDER = fileURLToPath(new URL("../helpers/record-imports.mjs", import.meta.url));
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OPTIONAL = {
  pg: "/node_modules/pg/",
  nats: "/node_modules/nats/",
  amqplib: "/node_modules/amqplib/",
  ioredis: "/node_modules/ioredis/",
  "trace SDK": "/node_modules/@opentelemetry/sdk-trace/",
  "OTLP exporter": "/node_modules/@opentelemetry/exporter-trace-otlp-http/",
};

let dir: TempDir;
afterEach(() => dir?.cleanup());

/** The libraries among OPTIONAL that `serve` with `config` resolved by the time it listened. */
async function optionalLibrariesLoaded(config: {
  store?: object;
  [key: string]: unknown;
}): Promise<string[]> {
  dir = tempDir("finality-lazy-");
  writeFileSync(dir.file("finality.config.json"), JSON.stringify(config));
  const record = dir.file("imports.txt");
  writeFileSync(record, "");
  const child = spawn(
    process.execPath,
    ["--import", RECORDER, CLI, "serve", "--config", dir.file("finality.config.json"), "--port", "0"],
    {
      env: {
        ...process.env,
        FINALITY_RECORD_IMPORTS: record,
        // A config without a store: a file of its own (FINALITY_DB would override a PostgreSQL one).
        ...(config.store === undefined ? { FINALITY_DB: dir.file("f.db") } : {}),
      },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const seen = (data: Buffer) => {
      output += data.toString();
      if (output.includes('"listening"') || /listening on /.test(output)) resolve();
    };
    child.stdout.on("data", seen);
    child.stderr.on("data", seen);
    exited.then((code) => reject(new Error(`serve exited ${code} before listening:\n${output}`)));
  });
  child.kill("SIGTERM");
  await exited;
  const urls = readFileSync(record, "utf8");
  return Object.entries(OPTIONAL).flatMap(([name, path]) => (urls.includes(path) ? [name] : []));
}

const provider = { acme: { type: "generic", webhook: { secrets: [SECRET] } } };

describe("finality serve loads optional libraries only when configured", () => {
  it("loads none of them on SQLite with URL effects and no tracing", async () => {
    const loaded = await optionalLibrariesLoaded({
      providers: provider,
      effects: [{ name: "notify", url: "http://127.0.0.1:9/done", secret: SECRET }],
    });
    expect(loaded).toEqual([]);
  });

  it("loads each one its configuration uses: the brokers of its effects, tracing, PostgreSQL", async () => {
    await requirePostgres("lazy modules on PostgreSQL");
    const loaded = await optionalLibrariesLoaded({
      providers: provider,
      store: { postgres: POSTGRES_TEST_URL, schema: "lazy_modules_test" },
      telemetry: { otlpUrl: "http://127.0.0.1:9/v1/traces" },
      effects: [
        { name: "to-nats", nats: { servers: "nats://127.0.0.1:9", subject: "done", stream: "DONE" } },
        { name: "to-redis", redis: { url: "redis://127.0.0.1:9", stream: "done" } },
      ],
    });
    expect(loaded.sort()).toEqual(["OTLP exporter", "ioredis", "nats", "pg", "trace SDK"]);
  });
});
