import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { webhookTally } from "../../src/cli/demo-traffic.js";
import { Outcome } from "../../src/dashboard/components.js";
import { DASHBOARD_CSS } from "../../src/dashboard/dashboard-style.js";
import { type InProcess, inProcessApp } from "./helpers/in-process.js";

// The wording a new user misread in the first hour (issue 19, item 11).

let t: InProcess;
beforeEach(async () => {
  t = await inProcessApp();
});
afterEach(async () => {
  await t.close();
});

const html = { headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" } };

describe("a browser that asks for a page that is not there", () => {
  it("gets an HTML 404 in the dashboard's frame", async () => {
    const response = await t.app.request("/nope", html);
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const page = await response.text();
    expect(page).toContain('id="not-found"');
    expect(page).toContain("<code>/nope</code>");
  });

  it("while programs, and any path of the API, still get a problem document", async () => {
    for (const [path, init] of [
      ["/nope", {}],
      ["/v1/nope", html],
      ["/webhooks", html],
    ] as const) {
      const response = await t.app.request(path, init);
      expect(response.status, path).toBe(404);
      expect(response.headers.get("content-type"), path).toBe("application/problem+json");
    }
  });
});

describe("a dashboard page with a cursor edited by hand", () => {
  it("answers a 400 page naming the problem, and the API a 400 problem", async () => {
    const page = await t.app.request("/jobs?cursor=garbage", html);
    expect(page.status).toBe(400);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await page.text()).toContain("cursor: not a cursor this server gave");
    const api = await t.app.request("/v1/jobs?cursor=garbage", html);
    expect(api.status).toBe(400);
    expect(api.headers.get("content-type")).toBe("application/problem+json");
  });
});

describe("timeline outcomes", () => {
  it("a repeat of the same state reads as a repeat, in the calm colour, not as a warning", async () => {
    const badge = String(await Outcome({ applied: false, reason: "stale" }));
    expect(badge).toContain(">repeat<");
    expect(badge).toContain('class="badge stale"');
    const calm = DASHBOARD_CSS.split("\n").find((line) => line.includes(".badge.duplicate-delivery"));
    expect(calm).toContain(".badge.stale");
    const warning = DASHBOARD_CSS.split("\n").find((line) => line.includes("var(--warn)"));
    expect(warning).not.toContain(".badge.stale");
  });

  it("a run sent back to the queue reads as the designed retry, not as lower rank", async () => {
    const retry = String(
      await Outcome({ applied: false, reason: "lower-rank", provider: "runs", rawState: "queued" }),
    );
    expect(retry).toContain(">retry queued<");
    expect(retry).not.toContain("lower rank");
    // An out-of-order update of any other job still says lower rank.
    const late = String(
      await Outcome({ applied: false, reason: "lower-rank", provider: "acme", rawState: "queued" }),
    );
    expect(late).toContain(">lower rank<");
  });
});

describe("the demo's status line", () => {
  it("counts lost webhooks as part of what was sent", () => {
    expect(webhookTally({ webhooksSent: 206, webhooksLost: 213, webhooksDuplicated: 30 })).toBe(
      "419 webhooks sent: 213 lost on the way, 30 delivered twice",
    );
  });
});
