import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DASHBOARD_PATHS } from "../../src/dashboard/dashboard-routes.js";
import { postJson, SECRET } from "../http/helpers/webhooks.js";
import { type Browser, openBrowser, publishScreenshot, screenshot } from "./helpers/chromium.js";
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

// Issue 19, item 7: every page works on a phone. At 390 × 844 (an iPhone 12-14 in portrait) no
// page may scroll sideways; the same pages at 1400 are the docs' pictures.

/** A job id as long as a provider's resource names get, with no place to break a line. */
const LONG_ID = `models/veo-3.0-generate-preview/operations/${"x9".repeat(40)}`;
const LONG_RESULT_ID = "long-result/job";

let ledger: Ledger;
let browser: Browser;

/** Every GET page the dashboard has, with the data that makes it widest. */
/** `docs`: the page is one of the pictures in docs/images/ (FINALITY_DOCS_SCREENSHOTS=1). */
function pages(): { name: string; path: string; route: string; docs?: boolean }[] {
  const job = (provider: string, id: string) => `/jobs/${provider}/${encodeURIComponent(id)}`;
  return [
    { name: "overview", path: "/", route: "/", docs: true },
    { name: "jobs", path: "/jobs", route: "/jobs", docs: true },
    { name: "jobs-filtered", path: "/jobs?state=succeeded&provider=acme", route: "/jobs" },
    { name: "job-story", path: job(STORY.provider, STORY.id), route: "/jobs/*", docs: true },
    { name: "job-long-id", path: job("acme", LONG_ID), route: "/jobs/*" },
    { name: "job-long-result", path: job("acme", LONG_RESULT_ID), route: "/jobs/*" },
    { name: "job-missing", path: job("acme", "nope"), route: "/jobs/*" },
    { name: "effects", path: "/effects", route: "/effects", docs: true },
    { name: "effects-dead", path: "/effects?status=dead", route: "/effects" },
    { name: "runs", path: "/runs", route: "/runs", docs: true },
    { name: "config", path: "/config", route: "/config", docs: true },
    { name: "parked", path: "/parked", route: "/parked" },
    { name: "intents", path: "/intents", route: "/intents" },
  ];
}

beforeAll(async () => {
  // `strict` takes webhooks only for registered jobs: one for an unregistered job is parked.
  const generic = { type: "generic", webhook: { secrets: [SECRET] } };
  ledger = await startLedger({
    extraConfig: {
      providers: { acme: generic, beta: generic, strict: { ...generic, unknownJobs: "registered-only" } },
    },
  });
  await seedJobs(ledger);
  await seedRuns(ledger);
  // An intent with the longest key the dashboard meets, open, for the Intents page.
  const intent = await postJson(
    `${ledger.service.url}/v1/intents`,
    { provider: "acme", key: LONG_ID.slice(0, 200), kind: "render", metadata: { order: 17 } },
    ledger.headers,
  );
  if (intent.status !== 201) throw new Error(`intent answered ${intent.status}`);
  await webhook(ledger, "acme", { jobId: LONG_ID, state: "succeeded", seq: 1 });
  const parked = await webhook(ledger, "strict", { jobId: LONG_ID, state: "succeeded", seq: 1 });
  if (parked.outcome !== "parked")
    throw new Error(`expected a parked observation: ${JSON.stringify(parked)}`);
  const answer = await fetch(
    `${ledger.service.url}/v1/jobs/acme/${encodeURIComponent(LONG_RESULT_ID)}/observations`,
    {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        state: "succeeded",
        result: { url: `https://example.com/${"segment-".repeat(30)}video.mp4`, text: "word ".repeat(200) },
      }),
    },
  );
  if (answer.status >= 300) throw new Error(`observation answered ${answer.status}: ${await answer.text()}`);
  // acme's succeeded jobs each get a notify effect that the receiver refuses: dead effects.
  await eventually(
    async () => (await listAll(ledger, "/v1/effects", { status: "dead" })).length >= 4,
    "the effects are dead",
  );
  browser = await openBrowser();
});

afterAll(async () => {
  await browser?.close();
  await ledger?.close();
});

/** How far the page scrolls sideways, and the elements that stick out past the window. */
async function overflowOf(page: Page): Promise<{ scrollWidth: number; width: number; culprits: string[] }> {
  // A string, not a function: the test files are typed without the DOM's types.
  return page.evaluate(`(() => {
    const width = window.innerWidth;
    const culprits = [];
    for (const element of document.querySelectorAll("body *")) {
      const box = element.getBoundingClientRect();
      if (box.right > width + 0.5 && culprits.length < 8) {
        const classes = element.classList.length ? "." + Array.from(element.classList).join(".") : "";
        const id = element.id ? "#" + element.id : "";
        culprits.push(element.tagName.toLowerCase() + id + classes + " (right edge " + Math.round(box.right) + " px)");
      }
    }
    return { scrollWidth: document.documentElement.scrollWidth, width, culprits };
  })()`);
}

describe("the configuration page of a real `finality serve`", () => {
  it("shows the webhooks the service took, per provider", async () => {
    const response = await fetch(`${ledger.service.url}/config`);
    const html = await response.text();
    const acme = html.slice(html.indexOf('data-provider="acme"'));
    expect(acme).toMatch(
      /data-field="last-webhook"><span data-outcome="(applied|duplicate-delivery|duplicate|stale|lower-rank)">/,
    );
  });
});

describe("the dashboard on a narrow screen (390 × 844)", () => {
  it("the list of pages covers every page route the dashboard has", () => {
    const covered = new Set(pages().map((p) => p.route));
    const forms = ["/login", "/logout", "/effects/*", "/config/*"];
    const pageRoutes = DASHBOARD_PATHS.filter((path) => !forms.includes(path));
    expect(pageRoutes.filter((route) => !covered.has(route))).toEqual([]);
  });

  it.each(pages())("$name ($path) does not scroll sideways", async ({ name, path, docs }) => {
    const page = await browser.newPage();
    try {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${ledger.service.url}${path}${path.includes("?") ? "&" : "?"}refresh=0`);
      const overflow = await overflowOf(page);
      const shot = await screenshot(page, `narrow-${name}`);
      if (docs) publishScreenshot(shot, `dashboard-390-${name}`);
      expect(
        overflow.scrollWidth,
        `${path} is ${overflow.scrollWidth} px wide in a ${overflow.width} px window: ${overflow.culprits.join(", ")}`,
      ).toBeLessThanOrEqual(overflow.width);
      // The header wraps rather than pushing the navigation out of sight.
      for (const link of await page.locator("header.top nav a").all()) {
        const box = await link.boundingBox();
        expect(box && box.x + box.width <= overflow.width, `${await link.textContent()} is visible`).toBe(
          true,
        );
      }
    } finally {
      await page.close();
    }
  });

  it.each(pages())("$name at 1400 px (the docs' pictures)", async ({ name, path, docs }) => {
    const page = await browser.newPage();
    try {
      await page.goto(`${ledger.service.url}${path}${path.includes("?") ? "&" : "?"}refresh=0`);
      const overflow = await overflowOf(page);
      const shot = await screenshot(page, `wide-${name}`);
      if (docs) publishScreenshot(shot, `dashboard-1400-${name}`);
      expect(overflow.scrollWidth, overflow.culprits.join(", ")).toBeLessThanOrEqual(overflow.width);
    } finally {
      await page.close();
    }
  });
});

describe("an empty dashboard on a narrow screen", () => {
  it("the first steps fit in 390 px", async () => {
    const empty = await startLedger();
    const page = await browser.newPage();
    try {
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto(`${empty.service.url}/?refresh=0`);
      expect(await page.locator("#first-steps").count()).toBe(1);
      const overflow = await overflowOf(page);
      const shot = await screenshot(page, "narrow-empty-overview");
      publishScreenshot(shot, "dashboard-390-empty-overview");
      expect(overflow.scrollWidth, overflow.culprits.join(", ")).toBeLessThanOrEqual(overflow.width);
    } finally {
      await page.close();
      await empty.close();
    }
  });
});
