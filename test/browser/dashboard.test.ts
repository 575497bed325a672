import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, openBrowser, screenshot } from "./helpers/chromium.js";
import {
  eventually,
  type Ledger,
  listAll,
  STORY,
  seedJobs,
  seedRuns,
  startLedger,
  webhook,
} from "./helpers/ledger.js";

interface ApiJob {
  provider: string;
  id: string;
  state: string;
}
interface ApiEffect {
  id: string;
  idempotencyKey: string;
  status: string;
}

let ledger: Ledger;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ledger = await startLedger();
  await seedJobs(ledger);
  await seedRuns(ledger);
  // acme's three succeeded bulk jobs and the story job each get a notify effect; the receiver
  // refuses them all, and one attempt is all they get: four dead effects.
  await ledger.receiver.until(() => ledger.receiver.deliveries.length >= 4);
  await eventually(
    async () => (await listAll(ledger, "/v1/effects", { status: "dead" })).length === 4,
    "four effects are dead",
  );
  browser = await openBrowser();
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
  await ledger?.close();
});

const value = async (selector: string) => Number(await page.locator(selector).getAttribute("data-value"));

describe("dashboard in Chromium against `finality serve`", () => {
  it("the overview's counts match the API", async () => {
    await page.goto(`${ledger.service.url}/?refresh=0`);
    const jobs = await listAll<ApiJob>(ledger, "/v1/jobs");
    for (const state of ["pending", "running", "succeeded", "failed", "cancelled", "expired", "lost"]) {
      const expected = jobs.filter((job) => job.state === state).length;
      expect(await value(`[data-count="state-${state}"]`), state).toBe(expected);
    }
    expect(await value('[data-count="open"]')).toBe(
      (await listAll(ledger, "/v1/jobs", { open: "true" })).length,
    );
    expect(await value('[data-count="effects-dead"]')).toBe(4);
    // The webhook outcomes chart: the same tally as every job's audit trail in the API.
    const outcomes = new Map<string, number>();
    for (const job of jobs) {
      const events = await listAll<{ source: string; applied: boolean; reason: string | null }>(
        ledger,
        `/v1/jobs/${job.provider}/${encodeURIComponent(job.id)}/events`,
      );
      for (const event of events.filter((e) => e.source === "webhook")) {
        const key = event.applied ? "applied" : (event.reason ?? "ignored");
        outcomes.set(key, (outcomes.get(key) ?? 0) + 1);
      }
    }
    expect(outcomes.get("stale")).toBeGreaterThan(0);
    expect(outcomes.get("duplicate-delivery")).toBe(1);
    for (const key of ["applied", "stale", "duplicate-delivery", "duplicate", "lower-rank"]) {
      const shown = await page
        .locator(`[data-chart="webhooks"] [data-series="${key}"]`)
        .getAttribute("data-total");
      expect(Number(shown), key).toBe(outcomes.get(key) ?? 0);
    }
    const settled = jobs.filter((job) => !["pending", "running"].includes(job.state)).length;
    expect(Number(await page.locator("[data-share-total]").getAttribute("data-share-total"))).toBe(settled);
    await screenshot(page, "overview");
  });

  it("filters jobs by state and provider from the form, and pages through all of them", async () => {
    await page.goto(`${ledger.service.url}/jobs`);
    await page.selectOption('select[name="state"]', "running");
    await page.selectOption('select[name="provider"]', "acme");
    await Promise.all([page.waitForURL(/state=running/), page.click('#job-filters button[type="submit"]')]);
    expect(page.url()).toContain("provider=acme");
    const rows = await page
      .locator("tr[data-job]")
      .evaluateAll((trs) =>
        trs.map((tr) => ({ job: tr.getAttribute("data-job"), state: tr.getAttribute("data-state") })),
      );
    const expected = await listAll<ApiJob>(ledger, "/v1/jobs", { state: "running", provider: "acme" });
    expect(rows.map((r) => r.job)).toEqual(expected.map((job) => `${job.provider}/${job.id}`));
    expect(rows.every((r) => r.state === "running" && r.job?.startsWith("acme/"))).toBe(true);
    expect(rows.length).toBeGreaterThan(0);
    await screenshot(page, "jobs-filtered");

    // Paging by cursor, 25 a page: every job once, in the API's order.
    await page.goto(`${ledger.service.url}/jobs?limit=25&refresh=0`);
    const seen: string[] = [];
    let pages = 0;
    for (;;) {
      pages++;
      seen.push(
        ...(await page
          .locator("tr[data-job]")
          .evaluateAll((trs) => trs.map((tr) => tr.getAttribute("data-job") ?? ""))),
      );
      if ((await page.locator("#next-page").count()) === 0) break;
      await Promise.all([page.waitForURL(/cursor=/), page.click("#next-page")]);
    }
    const all = await listAll<ApiJob>(ledger, "/v1/jobs");
    expect(seen).toEqual(all.map((job) => `${job.provider}/${job.id}`));
    expect(pages).toBe(Math.ceil(all.length / 25));
    expect(pages).toBeGreaterThan(1);
  });

  it("finds a job by id and shows its timeline: duplicate, stale and lower-rank webhooks with the reason", async () => {
    await page.goto(`${ledger.service.url}/jobs`);
    await page.fill('input[name="q"]', STORY.id);
    await Promise.all([page.waitForURL(/q=story/), page.click('#job-filters button[type="submit"]')]);
    await expect.poll(() => page.locator("tr[data-job]").count()).toBe(1);
    await Promise.all([page.waitForURL(/\/jobs\/acme\/story%2Fdup-stale/), page.click(`tr[data-job] a`)]);

    await page.waitForSelector("#timeline");
    expect(await page.locator("#job-id").textContent()).toBe(STORY.id);
    const events = await page.locator("#timeline tbody tr").evaluateAll((trs) =>
      trs.map((tr) => ({
        applied: tr.getAttribute("data-applied"),
        reason: tr.getAttribute("data-reason"),
        text: tr.textContent ?? "",
      })),
    );
    expect(events.map((e) => e.reason)).toEqual([
      null,
      "stale",
      null,
      "duplicate-delivery",
      "duplicate",
      "lower-rank",
    ]);
    expect(events.map((e) => e.applied)).toEqual(["true", "false", "true", "false", "false", "false"]);
    expect(events[1]?.text).toContain("not newer than what was applied");
    expect(events[3]?.text).toContain("this webhook-id was received before");
    expect(events[3]?.text).toContain("msg_story_3");
    expect(events.every((e) => e.text.includes("webhook"))).toBe(true);
    // Its effect, refused by the receiver once: dead, with the attempt counted.
    expect(await page.locator("tr[data-effect]").getAttribute("data-status")).toBe("dead");
    await screenshot(page, "job-timeline");
  });

  it("the retry button re-arms a dead effect, which is then delivered", async () => {
    await page.goto(`${ledger.service.url}/effects?refresh=0`);
    const dead = await listAll<ApiEffect>(ledger, "/v1/effects", { status: "dead" });
    const target = dead[0] as ApiEffect;
    await page.waitForSelector(`[data-section="dead"] tr[data-effect="${target.id}"]`);
    await screenshot(page, "effects");

    ledger.receiver.decide = () => 204;
    await Promise.all([page.waitForURL(/retried=/), page.click(`button[data-retry="${target.id}"]`)]);
    expect(await page.locator("#flash").textContent()).toContain("re-armed");
    await ledger.receiver.until(() => ledger.receiver.applied.has(target.idempotencyKey));
    await expect
      .poll(
        async () => (await listAll<ApiEffect>(ledger, "/v1/effects")).find((e) => e.id === target.id)?.status,
      )
      .toBe("delivered");
    // The others were not touched.
    expect((await listAll(ledger, "/v1/effects", { status: "dead" })).length).toBe(dead.length - 1);
    await screenshot(page, "effects-after-retry");
  });

  it("shows runs with their attempts and the workers holding leases", async () => {
    await page.goto(`${ledger.service.url}/runs`);
    await page.waitForSelector('#workers tr[data-worker="worker-a"]');
    const runs = await listAll<{ id: string; status: string }>(ledger, "/v1/runs");
    const shown = await page
      .locator("#runs tr[data-run]")
      .evaluateAll((trs) => trs.map((tr) => [tr.getAttribute("data-run"), tr.getAttribute("data-status")]));
    expect(shown).toEqual(runs.map((run) => [run.id, run.status]));
    expect(shown.map(([, status]) => status).sort()).toEqual(["queued", "queued", "running"]);
    await screenshot(page, "runs");
  });

  it("refreshes the overview's numbers in place, without reloading the page", async () => {
    await page.goto(`${ledger.service.url}/?refresh=1`);
    const before = await value('[data-count="state-succeeded"]');
    await page.evaluate(() => {
      (globalThis as { marker?: string }).marker = "same page";
    });
    await webhook(ledger, "beta", { jobId: "bulk-01", state: "succeeded", seq: 2 });
    await page.waitForSelector(`[data-count="state-succeeded"][data-value="${before + 1}"]`);
    expect(await page.evaluate(() => (globalThis as { marker?: string }).marker)).toBe("same page");
    expect(Number(await page.locator("#live").getAttribute("data-refreshes"))).toBeGreaterThan(0);
  });
});
