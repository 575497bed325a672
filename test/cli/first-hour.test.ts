import { existsSync, writeFileSync } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli, startService, tempDir } from "../http/helpers/service.js";
import { getJson } from "../http/helpers/webhooks.js";

// The friction a new user met in the first hour (issue 19), each through the real built CLI.

const dir = tempDir();
afterAll(() => dir.cleanup());

function configFile(name: string, value: unknown): string {
  const path = dir.file(name);
  writeFileSync(path, JSON.stringify(value));
  return path;
}

/** A port nothing listens on: bound by the kernel, then let go. */
async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

const ledgerDb = dir.file("ledger.db");
beforeAll(async () => {
  expect((await runCli(["migrate", "--db", ledgerDb])).code).toBe(0);
});

describe("commands do not create databases quietly", () => {
  it.each([
    [["jobs", "list"]],
    [["jobs", "show", "generic", "x"]],
    [["jobs", "events", "generic", "x"]],
    [["jobs", "register", "generic", "x"]],
    [["effects", "list"]],
    [["reconcile", "--once"]],
    [["prune", "--dry-run"]],
  ])("%j on a database that does not exist fails, names the path, and creates nothing", async (args) => {
    const typo = dir.file("typo.db");
    const result = await runCli([...args, "--db", typo]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`no database at ${typo}`);
    expect(existsSync(typo)).toBe(false);
  });

  it("serve on a port in use fails before it creates the database", async () => {
    const busy = createNetServer();
    await new Promise<void>((resolve) => busy.listen(0, "127.0.0.1", resolve));
    const { port } = busy.address() as { port: number };
    try {
      const fresh = dir.file("never-created.db");
      const result = await runCli(["serve", "--port", String(port), "--db", fresh]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`127.0.0.1:${port} is in use`);
      expect(existsSync(fresh)).toBe(false);
    } finally {
      await new Promise<void>((resolve) => busy.close(() => resolve()));
    }
  });
});

describe("a poll that fails says why, and the job keeps it", () => {
  it("reconcile --once names the URL without its key and the error code; jobs show, the API and the dashboard show it", async () => {
    const db = dir.file("polls.db");
    const port = await closedPort();
    const polled = {
      type: "generic",
      poll: { url: `http://127.0.0.1:${port}/jobs/{id}?api_key=sekrit-value&v=2` },
      reconcile: { graceSeconds: 0 },
    };
    // `elsewhere` is only in the first file: the second pass must say it skipped its job.
    const full = configFile("polls.json", {
      providers: { polled, elsewhere: { type: "generic", reconcile: { graceSeconds: 0 } } },
    });
    const partial = configFile("polls-partial.json", { providers: { polled } });
    expect((await runCli(["migrate", "--db", db])).code).toBe(0);
    expect((await runCli(["jobs", "register", "polled", "p-1", "--config", full, "--db", db])).code).toBe(0);
    expect((await runCli(["jobs", "register", "elsewhere", "e-1", "--config", full, "--db", db])).code).toBe(
      0,
    );

    const pass = await runCli(["reconcile", "--once", "--json", "--config", partial, "--db", db]);
    expect(pass.code, pass.stderr).toBe(0);
    const json = JSON.parse(pass.stdout) as {
      polled: number;
      results: Record<string, number>;
      failures: { provider: string; jobId: string; error: string }[];
      skipped: { count: number; reason: string; providers: string[] };
    };
    expect(json.polled).toBe(1);
    expect(json.results).toMatchObject({ failed: 1 });
    expect(json.failures).toHaveLength(1);
    expect(json.failures[0]?.error).toContain(`GET http://127.0.0.1:${port}/jobs/p-1?api_key=***&v=2`);
    expect(json.failures[0]?.error).toContain("ECONNREFUSED");
    expect(json.failures[0]).toMatchObject({
      provider: "polled",
      jobId: "p-1",
      url: `http://127.0.0.1:${port}/jobs/p-1?api_key=***&v=2`,
      code: "ECONNREFUSED",
    });
    expect(json.skipped).toEqual({ count: 1, reason: "provider not configured", providers: ["elsewhere"] });
    expect(pass.stdout + pass.stderr).not.toContain("sekrit-value");

    const show = await runCli(["jobs", "show", "polled", "p-1", "--json", "--config", partial, "--db", db]);
    const job = JSON.parse(show.stdout) as { lastPollError: Record<string, unknown>; lastPolledAt: string };
    // The failed poll asked the provider: its time is the job's last poll.
    expect(job.lastPolledAt).toBe(job.lastPollError.at);
    expect(job.lastPollError).toMatchObject({
      url: `http://127.0.0.1:${port}/jobs/p-1?api_key=***&v=2`,
      code: "ECONNREFUSED",
      status: null,
    });
    const text = await runCli(["jobs", "show", "polled", "p-1", "--config", partial, "--db", db]);
    expect(text.stdout).toMatch(
      new RegExp(`polls +1, last ${job.lastPolledAt.replace(/\./g, "\\.")}, next `),
    );
    expect(text.stdout).toMatch(
      /last poll error +GET http:\/\/127\.0\.0\.1:\d+\/jobs\/p-1\?api_key=\*\*\*&v=2: status API unreachable: ECONNREFUSED/,
    );

    // The same from a server on that database: the API and the dashboard's job page.
    const service = await startService({ db, args: ["--config", partial] });
    try {
      const api = await getJson(`${service.url}/v1/jobs/polled/p-1`);
      expect(api.body.lastPollError).toEqual(job.lastPollError);
      expect(api.body.lastPolledAt).toBe(job.lastPolledAt);
      const page = await (await fetch(`${service.url}/jobs/polled/p-1`)).text();
      expect(page).toContain('id="last-poll-error"');
      expect(page).toMatch(/<dd id="job-polls">\s*1 poll, last \d+ s ago/);
      expect(page).toContain("ECONNREFUSED");
      expect(page).not.toContain("sekrit-value");
    } finally {
      await service.stop();
    }

    // The skipped job of `elsewhere` is still due: a text pass says so too.
    const again = await runCli(["reconcile", "--once", "--config", partial, "--db", db]);
    expect(again.stdout).toContain(
      "skipped 1 due job of providers not in the configuration (elsewhere): pass the configuration that names them",
    );
  });
});

describe("the configuration refuses typos at every level, with the key that was meant", () => {
  it.each([
    [
      { providers: { acme: { type: "generic", webhooks: { secrets: ["s"] } } } },
      'providers.acme.webhooks: unknown field (did you mean "webhook"?)',
    ],
    [
      { providers: { acme: { type: "generic", pol: { url: "http://127.0.0.1:1/{id}" } } } },
      'providers.acme.pol: unknown field (did you mean "poll"?)',
    ],
    [
      {
        providers: { acme: { type: "generic", poll: { url: "http://127.0.0.1:1/{id}", timeoutSecond: 3 } } },
      },
      'providers.acme.poll.timeoutSecond: unknown field (did you mean "timeoutSeconds"?)',
    ],
    [
      { providers: { acme: { type: "generic", reconcile: { concurency: 3 } } } },
      'providers.acme.reconcile.concurency: unknown field (did you mean "concurrency"?)',
    ],
    [
      { providers: { ai: { type: "openai", apiKey: "k", baseUrl: "http://127.0.0.1:1", timeoutSecond: 3 } } },
      'providers.ai.timeoutSecond: unknown field (did you mean "timeoutSeconds"?)',
    ],
    // A key of another provider type is not offered: a generic provider has no apiKey.
    [{ providers: { acme: { type: "generic", apiKey: "k" } } }, "providers.acme.apiKey: unknown field\n"],
    [
      { effects: [{ name: "n", url: "http://127.0.0.1:1/", secret: "s", kind: ["x"] }] },
      'effects.0.kind: unknown field (did you mean "kinds"?)',
    ],
    [{ sever: { port: 1 } }, 'sever: unknown field (did you mean "server"?)'],
    [{ server: { prot: 80 } }, 'server.prot: unknown field (did you mean "port"?)'],
  ])("%j", async (config, message) => {
    const result = await runCli([
      "jobs",
      "list",
      "--config",
      configFile("typo.json", config),
      "--db",
      ledgerDb,
    ]);
    expect(result.code).toBe(2);
    expect(`${result.stderr}`).toContain(`config error: ${message}`);
  });

  it("a provider without a webhook section gets the hint that applies to it", async () => {
    const named = configFile("named.json", { providers: { acme: { type: "generic" } } });
    const service = await startService({ db: ledgerDb, args: ["--config", named] });
    await service.stop();
    expect(service.stdout()).toContain("add providers.acme.webhook to the configuration");
    expect(service.stdout()).not.toContain("FINALITY_WEBHOOK_SECRET");

    const builtIn = await startService({ db: ledgerDb });
    await builtIn.stop();
    expect(builtIn.stdout()).toContain("set FINALITY_WEBHOOK_SECRET, or configure providers");
  });
});

describe("read-only commands read no secret", () => {
  it("jobs list, show, events and effects list work with an env: secret unset; a command that acts still needs it", async () => {
    const config = configFile("secrets.json", {
      server: { apiToken: "env:UNSET_API_TOKEN_FOR_TEST" },
      providers: {
        acme: {
          type: "generic",
          webhook: { secrets: ["env:UNSET_WEBHOOK_SECRET_FOR_TEST"] },
          poll: { url: "http://127.0.0.1:1/{id}", headers: { authorization: "env:UNSET_POLL_TOKEN" } },
        },
      },
      effects: [{ name: "notify", url: "env:UNSET_EFFECT_URL", secret: "env:UNSET_EFFECT_SECRET" }],
    });
    for (const args of [
      ["jobs", "list"],
      ["jobs", "show", "generic", "none"],
      ["jobs", "events", "generic", "none"],
      ["effects", "list"],
      ["prune", "--dry-run"],
    ]) {
      const result = await runCli([...args, "--config", config, "--db", ledgerDb]);
      expect(result.stderr, args.join(" ")).not.toContain("is not set");
      expect(result.code === 0 || result.stderr.includes("no job generic/none"), args.join(" ")).toBe(true);
    }
    const acting = await runCli(["jobs", "register", "acme", "x", "--config", config, "--db", ledgerDb]);
    expect(acting.code).toBe(2);
    expect(acting.stderr).toContain("environment variable UNSET_API_TOKEN_FOR_TEST is not set");
  });
});

describe("invalid input is refused", () => {
  it("jobs observe with an unknown state is a usage error and records nothing", async () => {
    const result = await runCli(["jobs", "observe", "generic", "obs-1", "finished", "--db", ledgerDb]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("Allowed choices are pending, running");
    const events = await runCli(["jobs", "events", "generic", "obs-1", "--db", ledgerDb]);
    expect(events.stderr).toContain("no job generic/obs-1");
  });

  it("jobs list --cursor garbage is refused, not page 1", async () => {
    const result = await runCli(["jobs", "list", "--cursor", "garbage", "--db", ledgerDb]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("cursor: not a cursor this server gave");
    expect(result.stdout).toBe("");
  });

  it.each([
    [{ FINALITY_PORT: "abc" }, 'config error: FINALITY_PORT (server.port): expected a number, got "abc"'],
    [
      { FINALITY_BODY_LIMIT_BYTES: "1MB" },
      'config error: FINALITY_BODY_LIMIT_BYTES (server.bodyLimitBytes): expected a number, got "1MB"',
    ],
    [{ FINALITY_LOG_LEVEL: "loud" }, "config error: FINALITY_LOG_LEVEL (log.level)"],
  ])("%j names the variable", async (env, message) => {
    const result = await runCli(["jobs", "list", "--db", ledgerDb], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });
});
