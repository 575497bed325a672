import type { ShardedWorker } from "./sharded-workers.js";

// Reading the dashboard's HTML as a browser gets it from a (sharded) Worker, by the attributes the
// pages put on their rows and cards for tests and scripts.

export async function page(worker: ShardedWorker, path: string, version = "v"): Promise<string> {
  const response = await worker.fetch(version, path, { headers: { accept: "text/html" } });
  const html = await response.text();
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${html.slice(0, 300)}`);
  return html;
}

const unescapeHtml = (text: string) =>
  text
    .replace(/&amp;/g, "&")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<");
export const attrs = (html: string, name: string) =>
  [...html.matchAll(new RegExp(`${name}="([^"]*)"`, "g"))].map((m) => unescapeHtml(m[1] as string));
/** `data-count` → `data-value` of every count card. */
export const counts = (html: string) =>
  Object.fromEntries(
    [...html.matchAll(/data-count="([^"]+)" data-value="(\d+)"/g)].map((m) => [m[1], Number(m[2])]),
  );
/** The number an effects page's card shows for `status`. */
export const effectCard = (html: string, status: string) => {
  const match = new RegExp(`data-count="effects-${status}"[^]*?class="value"[^>]*>([^<]+)<`).exec(html);
  return match ? Number((match[1] as string).replace(/,/g, "")) : null;
};
const nextHref = (html: string, id: string) => {
  const match = new RegExp(`<a href="([^"]*)" id="${id}"`).exec(html);
  return match ? unescapeHtml(match[1] as string) : null;
};

/** Every row (`data-job`, `data-effect`) of every page, following the page's own next link. */
export async function everyRow(
  worker: ShardedWorker,
  first: string,
  row: string,
  next: string,
  version = "v",
) {
  const rows: string[] = [];
  let path: string | null = first;
  let pages = 0;
  while (path !== null) {
    const html = await page(worker, path, version);
    rows.push(...attrs(html, row));
    path = nextHref(html, next);
    if (++pages > 100) throw new Error("the pager does not end");
  }
  return { rows, pages };
}
