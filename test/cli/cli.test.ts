import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeProvider } from "../../src/testing/fake-provider.js";
import { eventually, type Ledger, listAll, STORY, seedJobs, startLedger } from "../browser/helpers/ledger.js";
import { runCli } from "../http/helpers/service.js";
import { getJson, postJson, SECRET } from "../http/helpers/webhooks.js";

let ledger: Ledger;
let provider: FakeProvider;
/** The CLI's own config: the server's providers plus `polled`, which only the CLI reconciles. */
let cliConfig: string;

/** `finality <args> --config <cli config> --db <the server's file>`, parsed when --json. */
async function cli(args: string[]) {
  const result = await runCli([...args, "--config", cliConfig, "--db", ledger.dbPath]);
  return { ...result, json: () => JSON.parse(result.stdout) as unknown };
}

const api = async (path: string) => {
  const answer = await getJson(`${ledger.service.url}${path}`);
  expect(answer.status, path).toBe(200);
  return answer.body;
};

beforeAll(async () => {
  ledger = await startLedger();
  await seedJobs(ledger);
  await ledger.receiver.until(() => ledger.receiver.deliveries.length >= 4);
  provider = new FakeProvider();
  const providerUrl = await provider.listen();
  cliConfig = ledger.configPath.replace(/\.json$/, ".cli.json");
  const generic = { type: "generic", webhook: { secrets: [SECRET] } };
  writeFileSync(
    cliConfig,
    JSON.stringify({
      providers: {
        acme: generic,
        beta: generic,
        polled: { ...generic, poll: { url: `${providerUrl}/jobs/{id}` }, reconcile: { graceSeconds: 0 } },
      },
      reconcile: { graceSeconds: 3600 },
    }),
  );
});

afterAll(async () => {
  await provider?.close();
  await ledger?.close();
});

describe("the CLI's --json output is what the API of a running server on the same database says", () => {
  it("jobs list, with filters and cursor paging", async () => {
    const all = await cli(["jobs", "list", "--json"]);
    expect(all.code).toBe(0);
    expect(all.json()).toEqual(await api("/v1/jobs"));

    const first = await cli([
      "jobs",
      "list",
      "--state",
      "succeeded",
      "--provider",
      "acme",
      "--limit",
      "2",
      "--json",
    ]);
    const firstPage = first.json() as { items: unknown[]; nextCursor: string };
    expect(firstPage).toEqual(await api("/v1/jobs?state=succeeded&provider=acme&limit=2"));
    expect(firstPage.items).toHaveLength(2);
    const second = await cli([
      "jobs",
      "list",
      "--state",
      "succeeded",
      "--provider",
      "acme",
      "--limit",
      "2",
      "--cursor",
      firstPage.nextCursor,
      "--json",
    ]);
    expect(second.json()).toEqual(
      await api(`/v1/jobs?state=succeeded&provider=acme&limit=2&cursor=${firstPage.nextCursor}`),
    );

    const open = await cli(["jobs", "list", "--open", "--no-stuck", "--json"]);
    expect(open.json()).toEqual(await api("/v1/jobs?open=true&stuck=false"));
  });

  it("jobs show and jobs events, for an id with a '/'", async () => {
    const path = `/v1/jobs/${STORY.provider}/${encodeURIComponent(STORY.id)}`;
    const show = await cli(["jobs", "show", STORY.provider, STORY.id, "--json"]);
    expect(show.json()).toEqual(await api(path));
    const events = await cli(["jobs", "events", STORY.provider, STORY.id, "--json"]);
    expect(events.json()).toEqual(await api(`${path}/events`));
    const later = await cli([
      "jobs",
      "events",
      STORY.provider,
      STORY.id,
      "--after",
      "2",
      "--limit",
      "3",
      "--json",
    ]);
    expect(later.json()).toEqual(await api(`${path}/events?after=2&limit=3`));

    const missing = await cli(["jobs", "show", "acme", "no-such-job", "--json"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no job acme/no-such-job");
  });

  it("jobs register: the job it prints is the job the API then serves; a second call changes nothing", async () => {
    const registered = await cli([
      "jobs",
      "register",
      "beta",
      "cli/job-1",
      "--kind",
      "report",
      "--metadata",
      '{"by":"cli"}',
      "--json",
    ]);
    expect(registered.code).toBe(0);
    const path = `/v1/jobs/beta/${encodeURIComponent("cli/job-1")}`;
    expect(registered.json()).toEqual(await api(path));
    expect(registered.json()).toMatchObject({
      state: "pending",
      kind: "report",
      metadata: { by: "cli" },
      registered: true,
    });
    const again = await cli(["jobs", "register", "beta", "cli/job-1", "--json"]);
    expect(again.json()).toEqual(await api(path));
    expect((await api(`${path}/events`)).items).toHaveLength(2);

    const unknown = await cli(["jobs", "register", "nobody", "x"]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('unknown provider "nobody"');
  });

  // Issue #33.11: "." and ".." registered, then no URL reached them.
  it("jobs register and jobs observe refuse an id no URL can carry, and store nothing", async () => {
    for (const command of [
      ["register", "beta", ".."],
      ["observe", "beta", ".", "running"],
    ]) {
      const refused = await cli(["jobs", ...command]);
      expect(refused.code, command.join(" ")).toBe(1);
      expect(refused.stderr).toMatch(/id: must not be "\.{1,2}": no URL can carry it/);
    }
    const listed = (await api("/v1/jobs?provider=beta&limit=500")) as { items: { id: string }[] };
    expect(listed.items.map((job) => job.id).filter((id) => id === "." || id === "..")).toEqual([]);
  });

  it("jobs observe: records through the reducer what the API then serves; a lower rank later is ignored", async () => {
    await cli(["jobs", "register", "beta", "cli/job-2"]);
    const path = `/v1/jobs/beta/${encodeURIComponent("cli/job-2")}`;
    const failed = await cli([
      "jobs",
      "observe",
      "beta",
      "cli/job-2",
      "failed",
      "--error",
      '{"reason":"gone"}',
      "--json",
    ]);
    expect(failed.code).toBe(0);
    expect(failed.json()).toEqual({ outcome: "applied", applied: true, job: await api(path) });
    expect(await api(path)).toMatchObject({ state: "failed", settledBy: "api", error: { reason: "gone" } });

    const late = await cli(["jobs", "observe", "beta", "cli/job-2", "running"]);
    expect(late.code).toBe(0);
    expect(late.stdout).toContain("recorded, not applied (lower-rank)");
    expect(await api(path)).toMatchObject({ state: "failed" });

    const bad = await cli(["jobs", "observe", "beta", "cli/job-2", "failed", "--seq", "-1"]);
    expect(bad.code).not.toBe(0);
  });

  it("effects list and effects retry", async () => {
    await eventually(
      async () => (await listAll(ledger, "/v1/effects", { status: "dead" })).length === 4,
      "four effects are dead",
    );
    const dead = await cli(["effects", "list", "--status", "dead", "--json"]);
    expect(dead.json()).toEqual(await api("/v1/effects?status=dead"));
    const all = await cli(["effects", "list", "--provider", "acme", "--limit", "500", "--json"]);
    expect(all.json()).toEqual(await api("/v1/effects?provider=acme&limit=500"));

    const target = (dead.json() as { items: { id: string; jobId: string; idempotencyKey: string }[] })
      .items[0]!;
    const delivered = ledger.receiver.deliveries.filter((d) => d.key === target.idempotencyKey).length;
    const retried = await cli(["effects", "retry", target.id, "--json"]);
    expect(retried.code).toBe(0);
    expect(retried.json()).toMatchObject({
      id: target.id,
      status: "pending",
      idempotencyKey: target.idempotencyKey,
    });
    // The running server's dispatcher delivers it again, under the same key; the job's trail says why.
    await ledger.receiver.until(
      () => ledger.receiver.deliveries.filter((d) => d.key === target.idempotencyKey).length > delivered,
    );
    const events = (await api(`/v1/jobs/acme/${encodeURIComponent(target.jobId)}/events`)).items as {
      detail: { action?: string; effectId?: string } | null;
    }[];
    expect(events.some((e) => e.detail?.action === "effect-retry" && e.detail.effectId === target.id)).toBe(
      true,
    );

    const again = await cli(["effects", "retry", "no-such-effect"]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("no effect");
  });

  it("reconcile --once polls what is due and records it where the API sees it", async () => {
    provider.addJob("p-done", [
      { afterMs: 0, state: "running" },
      { afterMs: 0, state: "succeeded", result: { ok: true } },
    ]);
    provider.addJob("p-busy", [{ afterMs: 0, state: "running" }]);
    for (const id of ["p-done", "p-busy", "p-gone"])
      expect((await cli(["jobs", "register", "polled", id])).code).toBe(0);

    const pass = await cli(["reconcile", "--once", "--json"]);
    expect(pass.code).toBe(0);
    expect(pass.json()).toMatchObject({ polled: 3, results: { observed: 2, "not-found": 1 } });
    expect(await api("/v1/jobs/polled/p-done")).toMatchObject({
      state: "succeeded",
      settledBy: "reconcile",
      result: { ok: true },
    });
    expect(await api("/v1/jobs/polled/p-busy")).toMatchObject({ state: "running", pollAttempts: 1 });
    expect(await api("/v1/jobs/polled/p-gone")).toMatchObject({ state: "pending", anomaly: "provider-404" });

    const idle = await cli(["reconcile", "--once", "--json"]);
    expect(idle.json()).toMatchObject({ polled: 0 });
    const text = await cli(["reconcile", "--once"]);
    expect(text.stdout).toMatch(/^reconcile: polled 0 jobs in \d+ ms\n$/);
  });

  it("sweep --once expires a lease that ran out; the API shows the attempt lost", async () => {
    const run = await postJson(`${ledger.service.url}/v1/runs`, { kind: "sweepme" });
    const claim = await postJson(`${ledger.service.url}/v1/workers/worker-z/claim`, {
      kinds: ["sweepme"],
      leaseSeconds: 1,
    });
    const attempt = claim.body.attempt as { id: string; generation: number; leaseExpiresAt: string };
    await postJson(`${ledger.service.url}/v1/attempts/${attempt.id}/events`, {
      generation: attempt.generation,
      sequence: 1,
      type: "started",
    });
    // The lease's own expiry is the event: wait for the clock to pass it.
    await new Promise((resolve) => setTimeout(resolve, Date.parse(attempt.leaseExpiresAt) - Date.now() + 20));

    const swept = await cli(["sweep", "--once", "--json"]);
    expect(swept.code).toBe(0);
    expect(swept.json()).toEqual({ lost_retry: 1 });
    const after = await api(`/v1/runs/${run.body.id}`);
    expect(after).toMatchObject({ status: "queued", attempts: [{ id: attempt.id, status: "lost" }] });
    expect(JSON.stringify(after.attempts)).toContain("REMOTE_RUN_LEASE_EXPIRED");

    const nothing = await cli(["sweep", "--once"]);
    expect(nothing.stdout).toBe("sweep: no lease was due\n");
  });
});

describe("maintenance commands in the same style", () => {
  it("prune --dry-run --json counts per table and removes nothing", async () => {
    const before = await listAll(ledger, "/v1/jobs");
    const dry = await cli(["prune", "--dry-run", "--json"]);
    expect(dry.code, dry.stderr).toBe(0);
    const result = dry.json() as { dryRun: boolean; rows: Record<string, number> };
    expect(result.dryRun).toBe(true);
    expect(Object.values(result.rows).every((n) => Number.isInteger(n))).toBe(true);
    expect(await listAll(ledger, "/v1/jobs")).toEqual(before);
  });
});

describe("one style for every command", () => {
  it("text output is plain when not on a terminal", async () => {
    const list = await cli(["jobs", "list", "--state", "succeeded"]);
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^PROVIDER\s+ID\s+KIND\s+STATE/);
    expect(list.stdout).not.toContain("\u001b[");
    const events = await cli(["jobs", "events", STORY.provider, STORY.id]);
    expect(events.stdout).toContain("duplicate-delivery");
    expect(events.stdout).not.toContain("\u001b[");
  });

  it.each([
    [["reconcile"], "reconcile needs --once"],
    [["sweep"], "sweep needs --once"],
    [["jobs", "list", "--state", "bogus"], "Allowed choices are pending, running"],
    [["jobs", "list", "--limit", "0"], "expected a whole number from 1 to 500"],
    [["jobs", "show", "acme"], "missing required argument 'id'"],
  ])("%j is a usage error: exit 2 and a message", async (args, message) => {
    const result = await cli(args);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(message);
  });

  it.each([
    ["serve"],
    ["demo"],
    ["migrate"],
    ["jobs", "list"],
    ["jobs", "show"],
    ["jobs", "events"],
    ["jobs", "register"],
    ["effects", "list"],
    ["effects", "retry"],
    ["reconcile"],
    ["sweep"],
    ["prune"],
    ["backup"],
    ["restore"],
  ])("%s --help shows examples", async (...command) => {
    const result = await runCli([...command, "--help"]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("Examples:");
    expect(result.stdout).toContain(`$ finality ${command.join(" ")}`);
  });
});
