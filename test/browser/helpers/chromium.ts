import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type BrowserContext, chromium, type Page } from "playwright-core";
import { requireBinary } from "../../helpers/services.js";

/** Debian's package (`apt-get install chromium`); .ci/run installs it when test/browser/.needs-chromium exists. */
export const CHROMIUM = "/usr/bin/chromium";
const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
/** Every page the tests visit, for a person to look at (git-ignored). */
export const SCREENSHOTS = join(ROOT, "test-output/screenshots");
/** The README's pictures: written only when FINALITY_DOCS_SCREENSHOTS=1. */
export const DOCS_IMAGES = join(ROOT, "docs/images");

export interface Browser {
  context: BrowserContext;
  newPage(): Promise<Page>;
  close(): Promise<void>;
}

/** Headless Chromium with a fresh profile of its own, removed on close. */
export async function openBrowser(): Promise<Browser> {
  requireBinary("Chromium", CHROMIUM);
  const profile = mkdtempSync(join(tmpdir(), "finality-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  context.setDefaultTimeout(20_000);
  return {
    context,
    newPage: () => context.newPage(),
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** A full-page screenshot under test-output/screenshots/<name>.png; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/** Copies a screenshot to docs/images/ when asked to (FINALITY_DOCS_SCREENSHOTS=1). */
export function publishScreenshot(path: string, name: string): void {
  if (process.env.FINALITY_DOCS_SCREENSHOTS !== "1") return;
  mkdirSync(DOCS_IMAGES, { recursive: true });
  copyFileSync(path, join(DOCS_IMAGES, `${name}.png`));
}
