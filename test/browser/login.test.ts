import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, openBrowser, screenshot } from "./helpers/chromium.js";
import { type Ledger, startLedger, TOKEN } from "./helpers/ledger.js";

let ledger: Ledger;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  ledger = await startLedger({ apiToken: TOKEN });
  browser = await openBrowser();
  page = await browser.newPage();
});

afterAll(async () => {
  await browser?.close();
  await ledger?.close();
});

describe("the dashboard behind server.apiToken", () => {
  it("sends a visitor without a session to the login form, and rejects a wrong token", async () => {
    await page.goto(`${ledger.service.url}/jobs?state=running`);
    expect(new URL(page.url()).pathname).toBe("/login");
    await page.fill("#token", "not-the-token-at-all");
    const [answer] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === "POST"),
      page.click('button[type="submit"]'),
    ]);
    expect(answer.status()).toBe(401);
    expect(await page.locator("#login-error").textContent()).toContain("That token is not correct");
    expect(await browser.context.cookies()).toEqual([]);
    await screenshot(page, "login-rejected");
    // Still locked: a page asks for the login again.
    await page.goto(`${ledger.service.url}/effects`);
    expect(new URL(page.url()).pathname).toBe("/login");
  });

  it("lets the right token in with an HttpOnly cookie, back to the page asked for, and signs out", async () => {
    await page.goto(`${ledger.service.url}/jobs?state=running`);
    await page.fill("#token", TOKEN);
    await Promise.all([page.waitForURL(/\/jobs\?state=running/), page.click('button[type="submit"]')]);
    expect(await page.locator("h1").first().textContent()).toBe("Jobs");
    const [cookie] = await browser.context.cookies();
    expect(cookie).toMatchObject({ name: "finality_session", httpOnly: true, sameSite: "Strict" });
    expect(cookie?.value).not.toContain(TOKEN);
    // The cookie opens the dashboard, not the JSON API: that still wants the bearer token.
    const api = await page.evaluate(async () => (await fetch("/v1/jobs")).status);
    expect(api).toBe(401);

    await Promise.all([page.waitForURL(/\/login/), page.click('form[action="/logout"] button')]);
    expect(await browser.context.cookies()).toEqual([]);
  });
});
