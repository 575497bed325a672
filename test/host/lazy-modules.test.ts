import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { GeminiFake } from "../fakes/gemini-fake.js";
import { geminiBatch } from "../fakes/gemini-fixtures.js";
import { POSTGRES_TEST_URL, requirePostgres } from "../helpers/postgres.js";
import { type TempDir, tempDir } from "../helpers/temp-dir.js";

// `finality serve` loads a library only when its configuration uses it: PostgreSQL's driver, the
// broker clients and the OpenTelemetry SDK together hold about 50 MiB of a process that does not
// (issue 16, "Memory"). The dashboard's pages, jose and the AWS signer (issue 29) load only when
// first used: a page asked for, a Gemini JWT checked, a Bedrock request signed. Which modules a
// real `serve` resolves is recorded by a module hook.

const CLI = fileURLToPath(new URL("../../dist/cli/main.js", import.meta.url));
const CLI_DIR_URL = new URL("../../dist/cli/", import.meta.url).href;
const BUNDLE_INPUTS = fileURLToPath(new URL("../../dist/cli/bundle-inputs.json", import.meta.url));
const RECORDER = fileURLToPath(new URL("../helpers/record-imports.mjs", import.meta.url));
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const OPTIONAL = {
  pg: "/node_modules/pg/",
  nats: "/node_modules/nats/",
  amqplib: "/node_modules/amqplib/",
  ioredis: "/node_modules/ioredis/",
  "trace SDK": "/node_modules/@opentelemetry/sdk-trace/",
  "OTLP exporter": "/node_modules/@opentelemetry/exporter-trace-otlp-http/",
  // The frame every dashboard page renders, and the Hono JSX runtime the pages are written in.
  "dashboard pages": "/dist/dashboard/layout.js",
  "Hono JSX": "/node_modules/hono/dist/jsx/",
  jose: "/node_modules/jose/",
  "AWS signer": "/node_modules/@smithy/signature-v4/",
  // zod's index names every locale; only the English one is used (about 10 MiB, issue 29).
  "zod locales": "/node_modules/zod/v4/locales/fr.js",
};

/**
 * The CLI is one bundle with chunks (scripts/bundle-cli.mjs): a chunk the process resolved stands
 * for the source modules it holds, which the build records. Each is added as `/path` beside the
 * resolved URLs, so a path in OPTIONAL matches whether its module was loaded alone or in a chunk.
 */
function withBundledInputs(urls: string): string {
  const inputs = JSON.parse(readFileSync(BUNDLE_INPUTS, "utf8")) as Record<string, string[]>;
  const held = urls
    .split("\n")
    .flatMap((url) => (url.startsWith(CLI_DIR_URL) ? (inputs[url.slice(CLI_DIR_URL.length)] ?? []) : []));
  return [urls, ...held.map((input) => `/${input}`)].join("\n");
}

let dir: TempDir;
afterEach(() => dir?.cleanup());

/**
 * The libraries among OPTIONAL that `serve` with `config` resolved by the time it listened, or, with
 * `use`, by the time `use` (given the server's URL) is done.
 */
async function optionalLibrariesLoaded(
  config: { store?: object; [key: string]: unknown },
  use?: (url: string) => Promise<void>,
): Promise<string[]> {
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
  const url = await new Promise<string>((resolve, reject) => {
    const seen = (data: Buffer) => {
      output += data.toString();
      const listening = /listening on (http:\/\/[^\s"]+)/.exec(output);
      if (listening) resolve(listening[1] as string);
    };
    child.stdout.on("data", seen);
    child.stderr.on("data", seen);
    exited.then((code) => reject(new Error(`serve exited ${code} before listening:\n${output}`)));
  });
  try {
    await use?.(url);
  } finally {
    child.kill("SIGTERM");
    await exited;
  }
  const urls = withBundledInputs(readFileSync(record, "utf8"));
  return Object.entries(OPTIONAL).flatMap(([name, path]) => (urls.includes(path) ? [name] : []));
}

const provider = { acme: { type: "generic", webhook: { secrets: [SECRET] } } };

describe("finality serve loads optional libraries only when configured", () => {
  it("loads none of them on SQLite with URL effects and no tracing, Gemini JWTs and Bedrock configured", async () => {
    const loaded = await optionalLibrariesLoaded({
      providers: {
        ...provider,
        gem: {
          type: "gemini",
          baseUrl: "http://127.0.0.1:9",
          apiKey: "AIza-unused",
          webhook: { jwt: { jwksUrl: "http://127.0.0.1:9/jwks.json", audience: "finality" } },
        },
        rock: { type: "bedrock", region: "us-east-1", accessKeyId: "AKIDEXAMPLE", secretAccessKey: "unused" },
      },
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

  it("loads the dashboard's pages on the first page asked for, jose on the first Gemini JWT: each first request answered", async () => {
    const gemini = new GeminiFake();
    const base = await gemini.listen();
    try {
      gemini.set("batches/lazy1", geminiBatch("batches/lazy1", "BATCH_STATE_SUCCEEDED"));
      const config = {
        providers: {
          ...provider,
          gem: {
            type: "gemini",
            baseUrl: base,
            apiKey: gemini.apiKey,
            webhook: { jwt: { jwks: gemini.jwks, audience: gemini.audience } },
          },
        },
      };
      const delivery = await gemini.jwtWebhook(
        "batch.succeeded",
        { id: "batches/lazy1" },
        { id: "wh_lazy_1" },
      );
      const page = { headers: { accept: "text/html" } };
      const loaded = await optionalLibrariesLoaded(config, async (url) => {
        const registered = await fetch(`${url}/v1/jobs`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ provider: "gem", id: "batches/lazy1" }),
        });
        expect(registered.status).toBe(201);
        // Three at once, each the first of its kind: they share one import, and each is answered.
        const [pages, webhooks, missing] = await Promise.all([
          Promise.all([1, 2, 3].map(() => fetch(`${url}/`, page))),
          Promise.all(
            [1, 2, 3].map(() =>
              fetch(`${url}/webhooks/gem`, {
                method: "POST",
                headers: delivery.headers,
                body: delivery.body,
              }),
            ),
          ),
          fetch(`${url}/no-such-page`, page),
        ]);
        for (const answer of pages) {
          expect(answer.status).toBe(200);
          expect(await answer.text()).toContain("<title>Overview");
        }
        const outcomes = await Promise.all(
          webhooks.map(async (answer) => ({ status: answer.status, ...((await answer.json()) as object) })),
        );
        expect(outcomes.map((answer) => answer.status)).toEqual([200, 200, 200]);
        expect(outcomes.filter((answer) => "outcome" in answer && answer.outcome === "applied")).toHaveLength(
          1,
        );
        expect(missing.status).toBe(404);
        expect(await missing.text()).toContain("<title>Not found");
        const job = await (await fetch(`${url}/v1/jobs/gem/batches%2Flazy1`)).json();
        expect(job).toMatchObject({ state: "succeeded" });
      });
      expect(loaded.sort()).toEqual(["Hono JSX", "dashboard pages", "jose"]);
    } finally {
      await gemini.close();
    }
  });
});
