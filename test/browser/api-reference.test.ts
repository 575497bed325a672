import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Browser, openBrowser, publishScreenshot, screenshot } from "./helpers/chromium.js";
import { type Ledger, startLedger, TOKEN } from "./helpers/ledger.js";

// /docs/api on a real `finality serve` (with an API token: the page and the document stay
// public): Swagger UI renders from the server's own files under its CSP, and lists every
// operation of /openapi.json.

let ledger: Ledger;
let browser: Browser;
let page: Page;
const foreign: string[] = [];
const refused: string[] = [];

beforeAll(async () => {
  ledger = await startLedger({ apiToken: TOKEN });
  browser = await openBrowser();
  page = await browser.newPage();
  const origin = new URL(ledger.service.url).origin;
  page.on("request", (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith("data:")) foreign.push(url);
  });
  page.on("console", (message) => {
    if (message.type() === "error") refused.push(message.text());
  });
  // Every refusal of the page's CSP, whether or not Chromium logs it.
  await page.addInitScript({
    content: `document.addEventListener("securitypolicyviolation", (event) =>
      console.error("CSP refused " + event.blockedURI + " (" + event.violatedDirective + ")"));`,
  });
  page.on("requestfailed", (request) => refused.push(`${request.url()}: ${request.failure()?.errorText}`));
});

afterAll(async () => {
  await browser?.close();
  await ledger?.close();
});

/** `METHOD /path` of every operation in the document. */
async function documentedOperations(): Promise<string[]> {
  const document = (await (await fetch(`${ledger.service.url}/openapi.json`)).json()) as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(document.paths)
    .flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`))
    .sort();
}

describe("/docs/api", () => {
  it("renders the reference from the server alone, under its CSP, listing every operation", async () => {
    const response = await page.goto(`${ledger.service.url}/docs/api`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await page.locator(".opblock").first().waitFor();
    await page.locator(".info .title").waitFor();
    expect(await page.locator(".info .title").textContent()).toContain("Finality");

    const listed = await page.$$eval(".opblock", (blocks) =>
      blocks.map((block) => {
        const method = block.querySelector(".opblock-summary-method")?.textContent ?? "?";
        const path = block.querySelector(".opblock-summary-path")?.getAttribute("data-path") ?? "?";
        return `${method.toUpperCase()} ${path}`;
      }),
    );
    const operations = await documentedOperations();
    expect(operations).toContain("POST /v1/workers/{workerId}/claim");
    expect(operations.length).toBeGreaterThan(20);
    // The effect payload is listed under "Webhooks" as POST effect; the rest are the paths.
    expect(listed.filter((op) => op !== "POST effect").sort()).toEqual(operations);
    expect(listed).toContain("POST effect");

    // Opening an operation (its schemas, an example answer) is refused nothing either.
    await page.locator("#operations-jobs-registerJob .opblock-summary").click();
    await page.locator("#operations-jobs-registerJob .responses-table").waitFor();
    expect(await page.locator("#operations-jobs-registerJob").textContent()).toContain("lastPollError");

    expect(foreign).toEqual([]);
    expect(refused).toEqual([]);
    publishScreenshot(await screenshot(page, "api-reference"), "api-reference");
  });

  it("the document is public; the API it describes still wants the token", async () => {
    const url = ledger.service.url;
    expect((await fetch(`${url}/openapi.json`)).status).toBe(200);
    expect((await fetch(`${url}/v1/jobs`)).status).toBe(401);
    const withToken = await fetch(`${url}/v1/jobs`, { headers: ledger.headers });
    expect(withToken.status).toBe(200);
  });
});
