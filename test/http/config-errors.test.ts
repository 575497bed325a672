import { writeFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, startService, tempDir } from "./helpers/service.js";

const dir = tempDir();
afterAll(() => dir.cleanup());

function configFile(name: string, value: unknown): string {
  const path = dir.file(name);
  writeFileSync(path, typeof value === "string" ? value : JSON.stringify(value));
  return path;
}

// No --port flag: flags win over the environment and the file, and some cases test those.
const serve = (args: string[], env: Record<string, string> = {}) =>
  runCli(["serve", "--db", dir.file("never-opened.db"), ...args], env);

describe("a bad configuration stops the start with one message naming the field, exit code 2", () => {
  it.each([
    [
      "a wrong type",
      {
        providers: {
          acme: {
            type: "generic",
            webhook: { secrets: ["whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"], toleranceSeconds: "5m" },
          },
        },
      },
      {},
      "config error: providers.acme.webhook.toleranceSeconds: expected number",
    ],
    ["an unknown field", { server: { prot: 80 } }, {}, "config error: server.prot: unknown field"],
    [
      "a misspelt reconcile field",
      { reconcile: { graceSecond: 5 } },
      {},
      "config error: reconcile.graceSecond: unknown field",
    ],
    [
      "a misspelt provider field (providers are strict too)",
      { providers: { acme: { type: "generic", webhooks: { secrets: ["s"] } } } },
      {},
      'config error: providers.acme.webhooks: unknown field (did you mean "webhook"?)',
    ],
    [
      "an unknown provider type",
      { providers: { acme: { type: "nope" } } },
      {},
      "config error: providers.acme.type",
    ],
    [
      "a missing env: secret",
      { providers: { acme: { type: "generic", webhook: { secrets: ["env:ACME_SECRET_NOT_SET"] } } } },
      {},
      "config error: providers.acme.webhook.secrets.0: environment variable ACME_SECRET_NOT_SET is not set",
    ],
    ["invalid JSON", "{ not json", {}, "invalid JSON"],
    [
      "a bad FINALITY_PORT",
      {},
      { FINALITY_PORT: "eighty" },
      'config error: FINALITY_PORT (server.port): expected a number, got "eighty"',
    ],
    [
      "a public host without an API token",
      {},
      { FINALITY_HOST: "0.0.0.0" },
      "config error: server.host: refusing to listen on 0.0.0.0 without an API token",
    ],
  ])("%s", async (_name, config, env, message) => {
    const result = await serve(["--config", configFile("bad.json", config)], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
    expect(result.stdout).not.toContain("listening");
  });

  it("a missing config file", async () => {
    const result = await serve(["--config", dir.file("absent.json")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("cannot read the file");
  });

  it("FINALITY_CONFIG names the file when --config is not given", async () => {
    const result = await serve([], { FINALITY_CONFIG: configFile("env.json", { server: { port: "x" } }) });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("config error: server.port: expected number");
  });
});

describe("a good configuration", () => {
  it("binds a public host when an API token is set, and env: secrets resolve", async () => {
    const config = configFile("good.json", {
      server: { host: "0.0.0.0", apiToken: "env:TEST_TOKEN" },
      providers: {
        acme: { type: "generic", webhook: { secrets: ["env:ACME_SECRET"] } },
      },
    });
    const service = await startService({
      db: dir.file("good.db"),
      args: ["--config", config],
      env: { TEST_TOKEN: "a-token-of-sixteen-chars", ACME_SECRET: "plain-text-secret" },
    });
    expect(service.url).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
    expect(await service.stop()).toEqual({ code: 0, signal: null });
  });

  it("finality migrate applies the migrations", async () => {
    const result = await runCli(["migrate", "--db", dir.file("migrated.db")]);
    expect(result).toMatchObject({ code: 0 });
    expect(result.stdout).toContain("up to date");
  });
});
